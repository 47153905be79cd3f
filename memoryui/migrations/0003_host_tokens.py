from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memoryui", "0002_proposals"),
    ]

    operations = [
        migrations.AddField(model_name="token", name="is_host",
                            field=models.BooleanField(default=False)),
        migrations.AddField(model_name="token", name="host_scopes",
                            field=models.JSONField(blank=True, default=list)),
        migrations.AddField(model_name="token", name="can_push_skills",
                            field=models.BooleanField(default=False)),
        migrations.AddField(model_name="token", name="can_push_directives",
                            field=models.BooleanField(default=False)),
    ]
