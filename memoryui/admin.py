from django.contrib import admin

from memoryui.models import Profile, Promotion, ReviewState, Token


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "role")
    list_filter = ("role",)


@admin.register(Token)
class TokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "scope", "is_admin", "can_write_world",
                    "can_write_global", "created_at", "last_used_at", "revoked_at")
    list_filter = ("is_admin", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    search_fields = ("name", "scope", "prefix")

    def has_add_permission(self, request) -> bool:  # tokens are issued by `token create` or the UI
        return False


admin.site.register(Promotion)
admin.site.register(ReviewState)
