package mcptools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// observation is the text of a result for the model: text content as it
// is, one block per line, other content summarised; the structured content
// as JSON when there is no content.
func observation(res *mcp.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		if s := describe(c); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}

// describe is one content block for the model.
func describe(c mcp.Content) string {
	switch c := c.(type) {
	case nil:
		return ""
	case *mcp.TextContent:
		if c == nil {
			return ""
		}
		return c.Text
	case *mcp.ImageContent:
		if c == nil {
			return ""
		}
		return fmt.Sprintf("[image: %s, %s]", mimeType(c.MIMEType), size(int64(len(c.Data))))
	case *mcp.AudioContent:
		if c == nil {
			return ""
		}
		return fmt.Sprintf("[audio: %s, %s]", mimeType(c.MIMEType), size(int64(len(c.Data))))
	case *mcp.ResourceLink:
		if c == nil {
			return ""
		}
		var about []string
		if c.Name != "" && c.Name != c.URI {
			about = append(about, c.Name)
		}
		if c.MIMEType != "" {
			about = append(about, c.MIMEType)
		}
		if c.Size != nil && *c.Size >= 0 {
			about = append(about, size(*c.Size))
		}
		if len(about) == 0 {
			return fmt.Sprintf("[resource link: %s]", c.URI)
		}
		return fmt.Sprintf("[resource link: %s (%s)]", c.URI, strings.Join(about, ", "))
	case *mcp.EmbeddedResource:
		if c == nil || c.Resource == nil {
			return "[resource]"
		}
		r := c.Resource
		if len(r.Blob) > 0 || r.Text == "" {
			return fmt.Sprintf("[resource: %s, %s, %s]", r.URI, mimeType(r.MIMEType), size(int64(len(r.Blob))))
		}
		return fmt.Sprintf("[resource: %s]\n%s", r.URI, r.Text)
	}
	return fmt.Sprintf("[content of a type this client does not show: %T]", c)
}

func mimeType(t string) string {
	if t == "" {
		return "unknown type"
	}
	return t
}

// size says n bytes as "512 B", "12 KB" or "3.4 MB" (1 KB is 1024 bytes).
func size(n int64) string {
	const kb, mb = 1 << 10, 1 << 20
	switch {
	case n < kb:
		return fmt.Sprintf("%d B", n)
	case n < mb:
		return fmt.Sprintf("%d KB", (n+kb/2)/kb)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/mb)
}
