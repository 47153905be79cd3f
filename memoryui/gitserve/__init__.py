"""memoryui as the agents' git remote: git smart HTTP at `/git/workspace.git` (docs/git-remote.md).

`app` is the ASGI app `memoryui.asgi` routes `/git/` to (authentication, then `git
http-backend` with bodies streamed); `backend` runs the CGI; `served` keeps the served ref
and the hooks; `rules` is what a host token may push; `pushpolicy` what its write
policies let it do with each path; `hooks` is what git runs before a ref moves (the checks,
then the push integrated into the workspace under the store's locks); `procreceive` turns a
push to `refs/for/<branch>` into proposals; `pushlog` remembers which commits arrived by a
push and from which host.
"""
