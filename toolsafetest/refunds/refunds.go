// Package refunds is a refunds service to test an agent's side-effecting
// tools against, as toolsafe's own examples and tests do (those of its
// nested modules too, which may not import the core's internal packages):
// an upstream HTTP handler that applies refunds, once per Idempotency-Key,
// and counts what it applied, so a test can prove a retry applied nothing
// twice; and the refund tool that asks for one with a real HTTP POST.
package refunds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Path is the upstream path refunds are posted to, for scripting faults.
const Path = "/refunds"

// Ledger is the refunds upstream. It applies each refund once per
// Idempotency-Key: a request that repeats a key gets the first answer
// again and applies nothing. A request without the header is applied every
// time. It is safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	byKey   map[string][]byte
	applied []Request
}

// Request is the body of POST /refunds.
type Request struct {
	Order     string  `json:"order"`
	AmountEUR float64 `json:"amount_eur"`
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{byKey: make(map[string][]byte)} }

// Applied is the number of refunds the ledger applied: the upstream's own
// count, which proves whether a retried request was applied twice.
func (l *Ledger) Applied() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.applied)
}

// Handler serves POST /refunds: it applies the refund in the JSON body and
// answers {"refund":"R-1","order":...,"amount_eur":...,"status":"applied"}.
func (l *Ledger) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Path, func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Order == "" || req.AmountEUR <= 0 {
			http.Error(w, `{"error":"bad refund request"}`, http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		l.mu.Lock()
		answer, seen := l.byKey[key]
		if !seen || key == "" {
			l.applied = append(l.applied, req)
			answer, _ = json.Marshal(map[string]any{
				"refund": fmt.Sprintf("R-%d", len(l.applied)), "order": req.Order,
				"amount_eur": req.AmountEUR, "status": "applied",
			})
			if key != "" {
				l.byKey[key] = answer
			}
		}
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
	return mux
}

// Tool returns the refund tool: it posts {"order":"A-1001","amount_eur":25}
// to the upstream at baseURL on the call's context. With sendKey it sends
// the call's idempotency key (middleware.IdempotencyKey) as the
// Idempotency-Key header, so the upstream applies the attempts of one call
// once; wrap it with middleware.SideEffectsWithKey then, else
// SideEffectsWithoutKey. An input without an order or a positive amount is a
// tool error. A nil client means http.DefaultClient.
func Tool(baseURL string, client *http.Client, sendKey bool) tools.Tool {
	return middleware.Func("refund",
		`Refunds an order. Input: {"order":"A-1001","amount_eur":25}. Needs a person's approval.`,
		func(ctx context.Context, input string) (string, error) {
			var req Request
			if err := json.Unmarshal([]byte(strings.TrimSpace(input)), &req); err != nil || req.Order == "" || req.AmountEUR <= 0 {
				return "", middleware.NewToolError(`the input must be {"order":"A-1001","amount_eur":25} with a positive amount`)
			}
			body, _ := json.Marshal(req)
			hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+Path, bytes.NewReader(body))
			if err != nil {
				return "", err
			}
			hreq.Header.Set("Content-Type", "application/json")
			if key := middleware.IdempotencyKey(ctx); sendKey && key != "" {
				hreq.Header.Set("Idempotency-Key", key)
			}
			return middleware.DoHTTP(client, hreq)
		})
}
