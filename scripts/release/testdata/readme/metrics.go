// Package metrics is the code around the README's metrics for operators,
// with the exporter at the version the README names (v0.69.0 requires
// OpenTelemetry v1.47.0, which ADK for Go v2.2.0 does not build with).
package metrics

//readme:require go.opentelemetry.io/otel/exporters/prometheus v0.68.0

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

func _(billingBreaker *policy.CircuitBreaker, billingBulkhead *policy.Bulkhead, grants *approval.Grants,
	store *redisstore.Store, budget *redisstore.Budget) {
	// README snippet
	_ = hook
}
