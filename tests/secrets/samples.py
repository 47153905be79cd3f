"""Fake credentials in the shapes real ones have (none is live), shared by the secrets tests."""

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
URL_PASSWORD = "hunter2pass"
URL = f"https://deploy:{URL_PASSWORD}@git.example.com/ops.git"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4g"
       "RG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
