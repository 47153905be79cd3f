"""Agent-facing memory tools, one module per framework dialect (see registry)."""

from memoryui.tools.registry import (
    Tool,
    ToolContext,
    ToolError,
    call_tool,
    find_tool,
    tools_for,
)

__all__ = ["Tool", "ToolContext", "ToolError", "call_tool", "find_tool", "tools_for"]
