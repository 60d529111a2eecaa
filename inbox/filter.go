package inbox

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// PageSize is how many requests the list, and how many decisions the audit
// trail, show on one page: 50. The rest are on the next pages (the page
// query parameter, from 1).
const PageSize = 50

// filter is what a person asked the list or the audit trail for, from the
// page's query: tool and run (exact), by (who decided, exact; audit only),
// q (text anywhere in the tool, input, run, call ID or, in the audit, who
// decided and their comment; case is ignored), older (waiting at least
// that long, as a Go duration such as 10m; list only), sort (oldest
// first, the default for the list; newest first, the default and only
// order of the audit) and page (from 1).
type filter struct {
	Tool, Run, By, Q, Older, Sort string
	older                         time.Duration
	Page                          int
	Problem                       string // what was wrong with the query, said on the page
}

func parseFilter(r *http.Request) filter {
	v := r.URL.Query()
	f := filter{Tool: v.Get("tool"), Run: v.Get("run"), By: v.Get("by"), Q: strings.TrimSpace(v.Get("q")),
		Older: v.Get("older"), Sort: v.Get("sort"), Page: 1}
	if f.Older != "" {
		d, err := time.ParseDuration(f.Older)
		if err != nil || d < 0 {
			f.Problem = "“older” must be a duration such as 10m or 2h; it is ignored."
			f.Older = ""
		} else {
			f.older = d
		}
	}
	if f.Sort != "" && f.Sort != "oldest" && f.Sort != "newest" {
		f.Problem = "“sort” is oldest or newest; the list is shown oldest first."
		f.Sort = ""
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			f.Problem = "“page” is a number from 1; the first page is shown."
		} else {
			f.Page = n
		}
	}
	return f
}

// Active tells whether anything narrows what is shown.
func (f filter) Active() bool {
	return f.Tool != "" || f.Run != "" || f.By != "" || f.Q != "" || f.Older != ""
}

// query is the filter as a query string, on page page (0: none).
func (f filter) query(page int) string {
	v := url.Values{}
	for k, s := range map[string]string{"tool": f.Tool, "run": f.Run, "by": f.By, "q": f.Q, "older": f.Older, "sort": f.Sort} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v.Encode()
}

// Live is where the list's live part polls: with the filter and page the
// page was opened with (a query url.Values encoded, so safe as a URL).
func (f filter) Live() template.URL {
	if q := f.query(f.Page); q != "" {
		return template.URL("live?" + q)
	}
	return "live"
}

func contains(s, q string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(q)) }

func (f filter) request(q approval.Request, now time.Time) bool {
	c := q.Call
	switch {
	case f.Tool != "" && c.Tool != f.Tool, f.Run != "" && c.RunID != f.Run:
		return false
	case f.older > 0 && now.Sub(q.Since) < f.older:
		return false
	case f.Q != "" && !contains(c.Tool, f.Q) && !contains(c.Input, f.Q) && !contains(c.RunID, f.Q) && !contains(c.CallID, f.Q):
		return false
	}
	return true
}

func (f filter) record(r approval.Record) bool {
	c := r.Call
	switch {
	case f.Tool != "" && c.Tool != f.Tool, f.Run != "" && c.RunID != f.Run, f.By != "" && r.By != f.By:
		return false
	case f.Q != "" && !contains(c.Tool, f.Q) && !contains(c.Input, f.Q) && !contains(c.RunID, f.Q) &&
		!contains(c.CallID, f.Q) && !contains(r.By, f.Q) && !contains(r.Comment, f.Q):
		return false
	}
	return true
}

// event is record for an event: by is who was refused.
func (f filter) event(e approval.Event) bool {
	return f.record(approval.Record{By: e.By, Call: e.Call})
}

// pager is where a page is among the pages of what the filter kept.
type pager struct {
	Total, From, To int          // From and To count from 1; 0 when nothing is kept
	Prev, Next      template.URL // the pages around, relative ("?page=2"), "" at an end
	All             int          // how many there are without the filter
}

// paginate returns the bounds of f's page among total items, and the pager.
func (f filter) paginate(total, all int) (lo, hi int, p pager) {
	p = pager{Total: total, All: all}
	lo = (f.Page - 1) * PageSize
	if lo >= total {
		lo = max(0, (total-1)/PageSize*PageSize)
	}
	hi = min(total, lo+PageSize)
	if total > 0 {
		p.From, p.To = lo+1, hi
	}
	page := lo/PageSize + 1
	if lo > 0 {
		p.Prev = template.URL("?" + f.query(page-1))
	}
	if hi < total {
		p.Next = template.URL("?" + f.query(page+1))
	}
	return lo, hi, p
}
