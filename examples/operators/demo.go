package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/tmc/langchaingo/tools"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// demo is the agents' side of the storm: tools wrapped with toolsafe
// behind a real upstream on 127.0.0.1, their metrics served on /metrics
// through the OpenTelemetry Prometheus exporter, as a program of yours
// would serve them.
type demo struct {
	upstream *toolsafetest.Upstream
	metrics  *http.Server
	addr     string // of /metrics
	mp       *sdkmetric.MeterProvider
	tp       *sdktrace.TracerProvider
	reg      interface{ Unregister() error }

	fetch, search, report, refund *toolsafe.Tool
	grants                        approval.Approver
	breaker                       *policy.CircuitBreaker
	store                         *redisstore.Store // nil: no fleet
	client                        *redis.Client
}

// upstreamHandler is the healthy upstream: invoices and reports as JSON.
func upstreamHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /invoices/{number}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"number":%q,"status":"paid"}`, r.PathValue("number"))
	})
	mux.HandleFunc("GET /reports/{month}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"month":%q,"rows":12}`, r.PathValue("month"))
	})
	return mux
}

// newDemo starts the upstream and the /metrics server on listen
// ("127.0.0.1:0" for a free port). With redisAddr, fetch_invoice's breaker
// and retry budget and refund's grants are a fleet's, shared through that
// Redis under prefix; without, they are this process's.
func newDemo(listen, redisAddr, prefix string) (*demo, error) {
	d := &demo{upstream: toolsafetest.NewUpstream(upstreamHandler())}
	// A report takes longer than its attempt timeout, whatever the storm.
	d.upstream.Always("/reports/2026-11", toolsafetest.Slow(400*time.Millisecond))
	// The exporter is a reader of the meter provider, registered with a
	// Prometheus registry of its own, served on /metrics.
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		d.upstream.Close()
		return nil, err
	}
	d.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	d.tp = sdktrace.NewTracerProvider() // spans made and dropped: the hook's metrics are the point here
	hook := otelhook.New(otelhook.WithMeterProvider(d.mp), otelhook.WithTracerProvider(d.tp))

	breaker := policy.Breaker{FailureThreshold: 5, Delay: 5 * time.Second}
	retry := policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2, Jitter: 0.25}}
	bulkhead := policy.NewBulkhead("billing", 8, 50*time.Millisecond)
	gauges := otelhook.Gauges{Bulkheads: []otelhook.Bulkhead{bulkhead}}
	if redisAddr == "" {
		d.breaker = policy.NewCircuitBreaker("billing", breaker)
		grants := approval.NewGrants()
		d.grants = grants
		gauges.Approvals = []otelhook.Approvals{grants}
	} else {
		d.client = redis.NewClient(redisstore.ClientOptions(redisAddr))
		if d.store, err = redisstore.New(d.client, redisstore.WithPrefix(prefix), redisstore.WithMeterProvider(d.mp)); err == nil {
			d.breaker, err = d.store.CircuitBreaker("billing", breaker)
		}
		var budget *redisstore.Budget
		if err == nil {
			budget, err = d.store.NewBudget("billing", 0.2)
		}
		if err != nil {
			d.close()
			return nil, err
		}
		retry.Shared = budget
		grants := d.store.Grants()
		d.grants = grants
		gauges.Approvals = []otelhook.Approvals{grants}
		gauges.Stores = []otelhook.FleetStore{d.store}
		gauges.Budgets = []otelhook.RetryBudget{budget}
	}
	gauges.Breakers = []otelhook.Breaker{d.breaker}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	d.fetch = toolsafe.Wrap(httpTool("fetch_invoice", "Fetches one invoice by its number.", client, d.upstream.URL()+"/invoices/", true),
		toolsafe.WithRetry(retry),
		toolsafe.WithTimeout(300*time.Millisecond),
		toolsafe.WithCircuitBreaker(d.breaker),
		toolsafe.WithBulkhead(bulkhead),
		toolsafe.WithCallLimits(run.Limits{Identical: 3}),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(quiet))
	// search_catalog calls the same upstream with retries and no breaker:
	// while the upstream is down, its calls fail (tool-failed) after every
	// retry, where fetch_invoice's breaker refuses at once (circuit-open).
	d.search = toolsafe.Wrap(httpTool("search_catalog", "Searches the catalog.", client, d.upstream.URL()+"/invoices/", true),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2, Jitter: 0.25}}),
		toolsafe.WithTimeout(300*time.Millisecond),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(quiet))
	// export_report ignores its context, as some tools do: its attempts
	// are abandoned by the attempt timeout while its request goes on.
	d.report = toolsafe.Wrap(httpTool("export_report", "Exports a monthly report.", client, d.upstream.URL()+"/reports/", false),
		toolsafe.WithTimeout(100*time.Millisecond),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(quiet))
	d.refund = toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) { return "refunded", nil }),
		toolsafe.WithApproval(d.grants),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(quiet))

	reg, err := hook.Observe(gauges)
	if err != nil {
		d.close()
		return nil, err
	}
	d.reg = reg

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		d.close()
		return nil, err
	}
	d.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	d.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go d.metrics.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on close
	return d, nil
}

// httpTool is a tool that GETs base+number. A tool that honours its
// context sends the request with it; one that does not (honour false)
// waits for the answer whatever happens.
func httpTool(name, desc string, client *http.Client, base string, honour bool) tools.Tool {
	return middleware.Func(name, desc, func(ctx context.Context, input string) (string, error) {
		reqCtx := ctx
		if !honour {
			reqCtx = context.Background()
		}
		req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, base+input, nil)
		if err != nil {
			return "", middleware.NewToolError("the input is not a valid name").WithCause(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err // a reset, a refused connection: transient
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", middleware.FromHTTPResponse(resp)
		}
		return string(body), nil
	})
}

// down takes the upstream down (every request is reset) or brings it back.
func (d *demo) down(on bool) {
	if on {
		d.upstream.Always("", toolsafetest.Reset())
	} else {
		d.upstream.Clear("")
	}
}

// agents runs n agents until ctx ends: each calls fetch_invoice every
// pause, in runs of 10 calls (one agent in four calls search_catalog too);
// one of them loops on the same invoice and meets its call limit. A request for approval waits from the start, undecided.
func (d *demo) agents(ctx context.Context, n int, pause time.Duration) {
	d.refund.Call(run.With(ctx, "refund-run", run.NewMemoryLedger()), `{"order":"A-1001","amount_eur":25}`)
	var wg sync.WaitGroup
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(pause)
			defer t.Stop()
			var rctx context.Context
			for i := 0; ; i++ {
				if i%10 == 0 { // a new run, with a ledger of its own
					rctx = run.With(ctx, "agent-"+strconv.Itoa(a)+"-run-"+strconv.Itoa(i/10), run.NewMemoryLedger())
				}
				number := "INV-" + strconv.Itoa(1000+i%7)
				if a == 0 {
					number = "INV-1001" // the looping agent
				}
				d.fetch.Call(rctx, number)
				if a == 1 && i%10 == 0 {
					d.report.Call(ctx, "2026-11")
				}
				if a%4 == 2 {
					d.search.Call(rctx, "INV-"+strconv.Itoa(2000+i))
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}

func (d *demo) close() error {
	var errs []error
	if d.metrics != nil {
		errs = append(errs, d.metrics.Close())
	}
	if d.reg != nil {
		errs = append(errs, d.reg.Unregister())
	}
	d.upstream.Release()
	d.upstream.Close()
	if d.store != nil {
		errs = append(errs, d.store.Close())
	}
	if d.client != nil {
		errs = append(errs, d.client.Close())
	}
	if d.mp != nil {
		errs = append(errs, d.mp.Shutdown(context.Background()), d.tp.Shutdown(context.Background()))
	}
	return errors.Join(errs...)
}
