// Package billing is a billing service to test an agent's tools against, as
// toolsafe's own examples and tests do (those of its nested modules too,
// which may not import the core's internal packages): an upstream HTTP
// handler that serves four fixed invoices, and the fetch_invoice tool that
// reads them with a real HTTP GET. Put toolsafetest.NewUpstream in front of
// Handler to script faults by InvoicePath.
package billing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Invoices are the invoices the upstream knows, by number.
var invoices = map[string]string{
	"INV-1001": `{"number":"INV-1001","customer":"Acme Corp","amount_eur":1250.00,"status":"paid"}`,
	"INV-1002": `{"number":"INV-1002","customer":"Globex","amount_eur":980.50,"status":"overdue"}`,
	"INV-1003": `{"number":"INV-1003","customer":"Initech","amount_eur":410.00,"status":"open"}`,
	"INV-2001": `{"number":"INV-2001","customer":"Umbrella","amount_eur":77.70,"status":"open"}`,
}

// Handler is the healthy billing upstream: GET /invoices/{number} answers
// the invoice as JSON, or 404.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /invoices/{number}", func(w http.ResponseWriter, r *http.Request) {
		inv, ok := invoices[r.PathValue("number")]
		if !ok {
			http.Error(w, `{"error":"no such invoice in ledger shard 7"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, inv)
	})
	return mux
}

// InvoicePath is the upstream path of an invoice, for scripting faults.
func InvoicePath(number string) string { return "/invoices/" + number }

// FetchInvoice returns the fetch_invoice tool: it reads one invoice from the
// upstream at baseURL with a real HTTP GET on the call's context. Its input
// is {"number":"INV-1001"} or the bare number. A number that does not start
// with INV- and an unknown invoice are tool errors, for the model to fix;
// everything else is as middleware.DoHTTP reports it.
func FetchInvoice(baseURL string, client *http.Client) tools.Tool {
	return middleware.Func("fetch_invoice",
		`Fetches one invoice by its number. Input: {"number":"INV-1001"}. Returns the invoice as JSON.`,
		func(ctx context.Context, input string) (string, error) {
			number := parseNumber(input)
			if !strings.HasPrefix(number, "INV-") {
				return "", middleware.NewToolError(
					"%q is not an invoice number: numbers look like INV-1001. Call fetch_invoice again with the full number.", number)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+InvoicePath(number), nil)
			if err != nil {
				return "", err
			}
			body, err := middleware.DoHTTP(client, req)
			var he *middleware.HTTPError
			if errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
				return "", middleware.NewToolError("invoice %s does not exist; check the number with the user.", number)
			}
			return body, err
		})
}

// parseNumber takes {"number":"..."} or a bare number, tolerating quotes and
// spaces as models write them.
func parseNumber(input string) string {
	var in struct {
		Number json.RawMessage `json:"number"`
	}
	if json.Unmarshal([]byte(input), &in) == nil && in.Number != nil {
		var s string
		if json.Unmarshal(in.Number, &s) == nil {
			return strings.TrimSpace(s)
		}
		return strings.TrimSpace(string(in.Number))
	}
	return strings.Trim(strings.TrimSpace(input), `"'`)
}
