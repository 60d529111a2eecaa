package inboxdemo

import (
	"html/template"
	"net/http"
)

var statusPage = template.Must(template.New("run").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Run {{.RunID}}</title></head>
<body>
<h1>Run {{.RunID}}</h1>
<p id="state">{{.State}}</p>
{{if .Finished}}<p id="answer">{{.Outcome.Answer}}</p>
<p id="applied">refunds applied by the upstream: {{.Outcome.Applied}}</p>{{end}}
<p><a href="./">Approvals inbox</a></p>
</body></html>
`))

// status writes the run's page: its state and, once finished, its answer.
func (d *Demo) status(w http.ResponseWriter) {
	d.mu.Lock()
	data := struct {
		RunID, State string
		Finished     bool
		Outcome      Outcome
	}{RunID, d.state, d.state == "finished", d.outcome}
	d.mu.Unlock()
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = statusPage.Execute(w, data)
}
