// Package tickets is the support-desk service of the fallback example: an
// upstream HTTP handler with a ticket lookup, a search and a search of the
// archive of closed tickets, and the three tools that call them.
package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Ticket is one support ticket.
type Ticket struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

var open = []Ticket{
	{ID: "T-1041", Title: "Printer on floor 3 jams on duplex", Status: "open"},
	{ID: "T-1042", Title: "Refund for order A-1001 not received (legacy ref PAY-88)", Status: "waiting on finance"},
	{ID: "T-1043", Title: "Badge reader at the north door is offline", Status: "open"},
}

var archived = []Ticket{
	{ID: "T-0007", Title: "VPN drops every hour on the office wifi", Status: "closed: fixed by the router firmware update"},
	{ID: "T-0019", Title: "VPN client asks for the password twice", Status: "closed: known issue, use client 4.2"},
}

// The upstream paths, for scripting faults.
const (
	SearchPath        = "/search"
	ArchiveSearchPath = "/archive/search"
)

// TicketPath is the upstream path of a ticket.
func TicketPath(id string) string { return "/tickets/" + id }

// Handler is the healthy upstream: GET /tickets/{id} answers the ticket or
// 404; GET /search?q= and GET /archive/search?q= answer the open or archived
// tickets whose ID or title contains q, ignoring case, as a JSON list.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		for _, t := range open {
			if t.ID == r.PathValue("id") {
				writeJSON(w, t)
				return
			}
		}
		http.Error(w, `{"error":"no such ticket"}`, http.StatusNotFound)
	})
	search := func(in []Ticket) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			q := strings.ToLower(r.URL.Query().Get("q"))
			found := []Ticket{}
			for _, t := range in {
				if q != "" && (strings.Contains(strings.ToLower(t.ID), q) || strings.Contains(strings.ToLower(t.Title), q)) {
					found = append(found, t)
				}
			}
			writeJSON(w, found)
		}
	}
	mux.HandleFunc("GET "+SearchPath, search(open))
	mux.HandleFunc("GET "+ArchiveSearchPath, search(archived))
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Lookup returns the lookup_ticket tool: input {"id":"T-1042"}. An unknown
// id is a tool error ("not found"), for the model or a fallback.
func Lookup(baseURL string, client *http.Client) tools.Tool {
	return middleware.Func("lookup_ticket", `Reads one support ticket by its ID. Input: {"id":"T-1042"}.`,
		func(ctx context.Context, input string) (string, error) {
			id := field(input, "id")
			if id == "" {
				return "", middleware.NewToolError(`the input must be {"id":"T-1042"}`)
			}
			body, found, err := get(ctx, client, baseURL+TicketPath(url.PathEscape(id)))
			if !found {
				return "", middleware.NewToolError("ticket %s was not found", id)
			}
			return body, err
		})
}

// Search returns the search_tickets tool: input {"query":"PAY-88"}; it
// answers the open tickets that match.
func Search(baseURL string, client *http.Client) tools.Tool {
	return searchTool("search_tickets", "Searches the open support tickets", baseURL+SearchPath, client)
}

// SearchArchive returns the search_archive tool: as search_tickets, over
// the archive of closed tickets.
func SearchArchive(baseURL string, client *http.Client) tools.Tool {
	return searchTool("search_archive", "Searches the archive of closed support tickets", baseURL+ArchiveSearchPath, client)
}

func searchTool(name, what, endpoint string, client *http.Client) tools.Tool {
	return middleware.Func(name, what+` by ID or words of the title. Input: {"query":"VPN"}.`,
		func(ctx context.Context, input string) (string, error) {
			q := field(input, "query")
			if q == "" {
				return "", middleware.NewToolError(`the input must be {"query":"some words"}`)
			}
			body, _, err := get(ctx, client, endpoint+"?q="+url.QueryEscape(q))
			return body, err
		})
}

// IDToQuery adapts the input of lookup_ticket to search_tickets:
// {"id":"PAY-88"} becomes {"query":"PAY-88"}, for a fallback.
func IDToQuery(_ context.Context, input string) (string, error) {
	id := field(input, "id")
	if id == "" {
		return "", middleware.NewToolError("no id to search for")
	}
	out, err := json.Marshal(map[string]string{"query": id})
	return string(out), err
}

// field reads a string field of a JSON object input, or takes a bare string.
func field(input, name string) string {
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) == nil {
		s, _ := m[name].(string)
		return strings.TrimSpace(s)
	}
	return strings.Trim(strings.TrimSpace(input), `"'`)
}

// get reads u with middleware.DoHTTP, except that a 404 is no error: it
// answers "" and found false.
func get(ctx context.Context, client *http.Client, u string) (body string, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", true, err
	}
	body, err = middleware.DoHTTP(client, req)
	var he *middleware.HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
		return "", false, nil
	}
	return strings.TrimSpace(body), true, err
}
