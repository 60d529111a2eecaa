package mcptools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content that is not text reaches the model as a summary, never dropped
// silently.
func TestContentForTheModel(t *testing.T) {
	linkSize := int64(40 << 10)
	cases := []struct {
		name   string
		result *mcp.CallToolResult
		want   string
	}{
		{"text blocks, one per line", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Oslo: 4°C"}, &mcp.TextContent{Text: "Bergen: 7°C"},
		}}, "Oslo: 4°C\nBergen: 7°C"},
		{"images and audio are summarised with their type and size", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "The radar:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 12<<10)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 300)},
			&mcp.ImageContent{Data: make([]byte, 3<<20+400<<10)},
		}}, "The radar:\n[image: image/png, 12 KB]\n[audio: audio/wav, 300 B]\n[image: unknown type, 3.4 MB]"},
		{"resource links name the resource", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ResourceLink{URI: "file:///reports/oslo.pdf", Name: "oslo.pdf", MIMEType: "application/pdf", Size: &linkSize},
			&mcp.ResourceLink{URI: "https://example.com/x", Name: "https://example.com/x"},
		}}, "[resource link: file:///reports/oslo.pdf (oslo.pdf, application/pdf, 40 KB)]\n[resource link: https://example.com/x]"},
		{"an embedded text resource keeps its text, a binary one is summarised", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "Bring an umbrella."}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://chart", MIMEType: "image/svg+xml", Blob: make([]byte, 2048)}},
		}}, "[resource: mem://notes]\nBring an umbrella.\n[resource: mem://chart, image/svg+xml, 2 KB]"},
		{"structured content answers when there is no content", &mcp.CallToolResult{
			StructuredContent: map[string]any{"city": "Oslo", "celsius": 4},
		}, `{"celsius":4,"city":"Oslo"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, nil, func(srv *mcp.Server) {
				rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return c.result, nil
				})
			})
			out, err := only(t, s).Call(context.Background(), `{"city":"Oslo"}`)
			if err != nil {
				t.Fatal(err)
			}
			if out != c.want {
				t.Errorf("the model saw\n%s\nwant\n%s", out, c.want)
			}
		})
	}

	t.Run("an error result's images are summarised too", func(t *testing.T) {
		s := startServer(t, nil, func(srv *mcp.Server) {
			rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
					&mcp.TextContent{Text: "The map service is down; here is the last map."},
					&mcp.ImageContent{MIMEType: "image/jpeg", Data: make([]byte, 1<<10)},
				}}, nil
			})
		})
		_, err := only(t, s).Call(context.Background(), `{}`)
		if err == nil || !strings.HasSuffix(err.Error(), "last map.\n[image: image/jpeg, 1 KB]") {
			t.Errorf("error %v", err)
		}
	})
}
