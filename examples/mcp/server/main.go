// Command server is a small MCP server for the mcp example, on the official
// Go SDK: forecast, annotated read-only, and delete_alert, annotated
// destructive. It serves over stdio, or with -http ADDR over Streamable
// HTTP, where it answers the first tools/call 503 Service Unavailable with
// Retry-After: 1, as an overloaded server would. forecast is flaky on
// purpose, in a scripted order so that every run tells the same story:
//
//   - the first call for Oslo fails with a JSON-RPC internal error whose text
//     holds what a real server's might (an address, a database error), which
//     must never reach the model;
//   - the second call for Oslo never answers, until the client gives up and
//     cancels it;
//   - the third answers, with text and a radar image;
//   - every call for Atlantis answers a result with isError: the server's
//     message for the model.
//
// It logs each request to stderr, one line each. Run it on its own with any
// MCP client: go run ./server, or go run ./server -http 127.0.0.1:8080
// (it prints its endpoint on stdout first).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type forecastArgs struct {
	City string `json:"city"`
	Days int    `json:"days,omitempty"`
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (such as 127.0.0.1:0) instead of stdio")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("weather-server: ")
	log.SetOutput(os.Stderr)
	server, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	if *addr != "" {
		err = serveHTTP(server, *addr)
	} else {
		err = server.Run(context.Background(), &mcp.StdioTransport{})
	}
	if err != nil {
		log.Fatal(err)
	}
}

// serveHTTP serves server over Streamable HTTP on addr, after printing the
// endpoint on stdout. The first tools/call is answered 503 with Retry-After.
func serveHTTP(server *mcp.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	var overloaded atomic.Bool
	overloaded.Store(true)
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request", http.StatusBadRequest)
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && overloaded.CompareAndSwap(true, false) {
			log.Printf("HTTP POST tools/call: 503 Service Unavailable, Retry-After: 1 (overloaded)")
			w.Header().Set("Retry-After", "1")
			http.Error(w, "overloaded: upstream pool 10.20.0.9 exhausted", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler.ServeHTTP(w, r)
	})
	return http.Serve(ln, front)
}

func newServer() (*mcp.Server, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "weather-server", Version: "v1.0.0"}, nil)
	img, err := radar()
	if err != nil {
		return nil, err
	}
	one, seven := 1.0, 7.0
	f := &forecaster{calls: map[string]int{}, radar: img}
	mcp.AddTool(server, &mcp.Tool{
		Name:        "forecast",
		Description: "Tells the weather of a city for the next days, with a radar image.",
		// It only reads: a client that trusts this server retries it freely.
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		InputSchema: &jsonschema.Schema{
			Type:     "object",
			Required: []string{"city"},
			Properties: map[string]*jsonschema.Schema{
				"city": {Type: "string", Description: "the city, such as Oslo"},
				"days": {Type: "integer", Description: "how many days, 1 to 7 (default 1)", Minimum: &one, Maximum: &seven},
			},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, f.forecast)
	destructive := true
	mcp.AddTool(server, &mcp.Tool{
		Name:        "delete_alert",
		Description: "Deletes a weather alert the user subscribed to, by its ID (such as A-7).",
		// It destroys: a client reports it as a candidate for approval.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
		InputSchema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"id"},
			Properties:           map[string]*jsonschema.Schema{"id": {Type: "string", Description: "the alert's ID, such as A-7"}},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, deleteAlert)
	return server, nil
}

type alertArgs struct {
	ID string `json:"id"`
}

func deleteAlert(_ context.Context, _ *mcp.CallToolRequest, in alertArgs) (*mcp.CallToolResult, any, error) {
	log.Printf("tools/call delete_alert %s: deleted", in.ID)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Alert " + in.ID + " deleted."}}}, nil, nil
}

type forecaster struct {
	mu    sync.Mutex
	calls map[string]int // by city
	radar []byte
}

func (f *forecaster) forecast(ctx context.Context, _ *mcp.CallToolRequest, in forecastArgs) (*mcp.CallToolResult, any, error) {
	f.mu.Lock()
	f.calls[in.City]++
	n := f.calls[in.City]
	f.mu.Unlock()
	days := max(in.Days, 1)

	switch {
	case in.City == "Atlantis":
		log.Printf("tools/call forecast %s #%d: isError (no such city)", in.City, n)
		r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: "No such city: Atlantis. Ask the user for a real city, such as Oslo or Bergen.",
		}}}
		return r, nil, nil
	case in.City == "Oslo" && n == 1:
		msg := "weather upstream: dial tcp 10.20.0.7:443: connect: connection refused (api key wx-7f3a…)"
		log.Printf("tools/call forecast %s #%d: JSON-RPC internal error %q", in.City, n, msg)
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	case in.City == "Oslo" && n == 2:
		log.Printf("tools/call forecast %s #%d: hanging", in.City, n)
		<-ctx.Done() // the client cancels (notifications/cancelled) when it gives up
		log.Printf("tools/call forecast %s #%d: cancelled by the client", in.City, n)
		return nil, nil, ctx.Err()
	}
	log.Printf("tools/call forecast %s #%d: answered", in.City, n)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: fmt.Sprintf("%s, next %d days: sunny, 4°C, wind 3 m/s.", in.City, days)},
		&mcp.ImageContent{MIMEType: "image/png", Data: f.radar},
	}}, nil, nil
}

// radar is a made-up radar image: 64×64 pixels of seeded noise, the same
// every run.
func radar() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.NRGBA{R: uint8(r.IntN(256)), G: uint8(r.IntN(256)), B: 255, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("the radar image: %w", err)
	}
	return b.Bytes(), nil
}
