package inbox

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// Store is where the inbox reads what waits and records answers: Memory
// for an approval.Grants, or redisstore's Grants. Its methods must be safe
// for concurrent use. Answer must decide the request and record it in the
// audit trail in one step, or do neither: it returns an error wrapping
// approval.ErrNotPending when the request no longer waits as listed, and
// one wrapping approval.ErrTooManyDecisions when it refuses one more
// decision for the request's tool and input; the pages say which. Any
// other error reads as the store being unavailable (its text goes to the
// log at DEBUG).
//
// The inbox does more with a Store that has the methods of Replier
// (approve with changes, deny with a message, quorum votes), Overflower
// (what a full list dropped) and EventStore (refusals in the audit trail);
// Memory and redisstore's Grants have them all. A Store that wraps
// another must have them too, forwarding each: a struct that embeds
// Store has only Store's three methods, and the inbox then offers none of
// that.
type Store interface {
	// Requests returns the requests waiting, oldest first.
	Requests(ctx context.Context) ([]approval.Request, error)
	// Answer decides the request id, recording by and comment.
	Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error)
	// Audit returns at most limit records, newest first; limit ≤ 0: all.
	Audit(ctx context.Context, limit int) ([]approval.Record, error)
}

// Memory returns g as a Store; its errors are nil and it ignores ctx. The
// audit trail is g's, in memory (see approval.Grants.Audit). Memory(nil)
// returns nil, which New refuses.
func Memory(g *approval.Grants) Store {
	if g == nil {
		return nil
	}
	return memory{g}
}

type memory struct{ g *approval.Grants }

func (m memory) Requests(context.Context) ([]approval.Request, error) { return m.g.Requests(), nil }

func (m memory) Answer(_ context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	return m.g.Answer(id, d, by, comment)
}

func (m memory) Audit(_ context.Context, limit int) ([]approval.Record, error) {
	return m.g.Audit(limit), nil
}

// DefaultPollInterval is how often the list page asks for updates when
// WithPollInterval is not given: 2s.
const DefaultPollInterval = 2 * time.Second

// TokenTTL is how long a decision form stays valid after it was shown:
// 12 hours. An older form is refused; reloading the request gives a new one.
const TokenTTL = 12 * time.Hour

// MaxComment is the longest comment accepted, in characters: 1,000.
const MaxComment = 1000

type config struct {
	key       []byte
	authorize Authorize
	check     func(tool, input string) error
	poll      time.Duration
	logger    *slog.Logger
	errs      []error
}

// Option configures a Handler.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithCSRFKey sets the key that signs decision forms (default: 32 random
// bytes per Handler). Give every replica of an inbox behind one address the
// same key of at least 32 bytes, kept secret.
func WithCSRFKey(key []byte) Option {
	return optionFunc(func(c *config) {
		if len(key) < 32 {
			c.errs = append(c.errs, fmt.Errorf("the CSRF key has %d bytes: give at least 32", len(key)))
			return
		}
		c.key = append([]byte(nil), key...)
	})
}

// WithPollInterval sets how often the list page asks for updates (default
// DefaultPollInterval, 2s); zero keeps the default. It must be at least
// 100ms. A poll of an unchanged list is answered 304 Not Modified, with no
// body (the live part, requests.json and audit.json carry an ETag).
func WithPollInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		switch {
		case d == 0:
		case d < 100*time.Millisecond:
			c.errs = append(c.errs, fmt.Errorf("the poll interval %v is shorter than 100ms", d))
		default:
			c.poll = d
		}
	})
}

// WithLogger sets the logger of store failures (default slog.Default()).
// A failure is logged at WARN without its text, which goes to DEBUG.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// Handler is the inbox: mount it where people reach it, behind the
// program's own sign-in, e.g. http.StripPrefix("/approvals", h) at
// "/approvals/". It is safe for concurrent use.
type Handler struct {
	store    Store
	identity func(*http.Request) (string, bool)
	cfg      config
	pages    *template.Template
	mux      *http.ServeMux
	origin   *http.CrossOriginProtection
}

//go:embed assets
var assets embed.FS

// New returns the inbox over store. identity tells who sends a request;
// the handler refuses (403) every request for which it answers false or an
// empty user. New returns an error when store or identity is nil, or an
// option is invalid: there is no inbox open to anyone.
func New(store Store, identity func(*http.Request) (user string, ok bool), opts ...Option) (*Handler, error) {
	cfg := config{poll: DefaultPollInterval}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if store == nil {
		cfg.errs = append(cfg.errs, errors.New("the store is nil: pass inbox.Memory(grants) or a redisstore Grants"))
	}
	if identity == nil {
		cfg.errs = append(cfg.errs, errors.New("the identity function is nil: the inbox must know who decides; pass a func(*http.Request) (user string, ok bool) that reads your sign-in (session cookie, proxy header)"))
	}
	if len(cfg.errs) > 0 {
		return nil, fmt.Errorf("inbox: %w", errors.Join(cfg.errs...))
	}
	if cfg.key == nil {
		cfg.key = make([]byte, 32)
		_, _ = rand.Read(cfg.key) // never fails (crypto/rand)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	h := &Handler{store: store, identity: identity, cfg: cfg, origin: http.NewCrossOriginProtection()}
	h.pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	static, _ := fs.Sub(assets, "assets")
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /{$}", h.list)
	h.mux.HandleFunc("GET /live", h.live)
	h.mux.HandleFunc("GET /request", h.detail)
	h.mux.HandleFunc("POST /decide", h.decide)
	h.mux.HandleFunc("GET /audit", h.auditPage)
	h.mux.HandleFunc("GET /audit.json", h.auditJSON)
	h.mux.HandleFunc("GET /requests.json", h.requestsJSON)
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", staticOnly(http.FileServerFS(static))))
}

// staticOnly serves the script and the style sheet, nothing else.
func staticOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "inbox.js" && r.URL.Path != "inbox.css" {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type userKey struct{}

// ServeHTTP sets the security headers, identifies the user (403 when it
// cannot) and serves the inbox.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	user, ok := h.identity(r)
	user = strings.TrimSpace(strings.ToValidUTF8(user, "\uFFFD"))
	if !ok || user == "" {
		http.Error(w, "inbox: you are not signed in as an approver", http.StatusForbidden)
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
}

func userOf(r *http.Request) string { s, _ := r.Context().Value(userKey{}).(string); return s }

// storeFailed logs a store error: WARN without its text, DEBUG with it.
func (h *Handler) storeFailed(r *http.Request, op string, err error) {
	h.cfg.logger.Warn("inbox: the approvals store failed", "operation", op)
	h.cfg.logger.Debug("inbox: the approvals store failed", "operation", op, "error", err.Error(), "path", r.URL.Path)
}
