package policyfile

import (
	"maps"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// The tool fields of who decides: approvers (groups) and approvals (a
// quorum).

// groups decodes approvers: a list of group names, or one.
func (d *decoder) groups(n ast.Node, w where) opt[[]string] {
	n = d.Deref(n, w)
	var items []ast.Node
	switch s := n.(type) {
	case nil, *ast.NullNode:
		return opt[[]string]{}
	case *ast.SequenceNode:
		items = s.Values
	default:
		items = []ast.Node{n}
	}
	o := opt[[]string]{set: true, at: w.at, v: []string{}}
	for i, item := range items {
		iw := w.index(i, yamlread.NodePos(item))
		s := d.text(item, iw)
		switch {
		case !s.set:
		case s.v == "":
			d.errf(iw, "an approver group needs a name: one of the groups the program gives the inbox (inbox.Groups)")
		case !slices.Contains(o.v, s.v):
			o.v = append(o.v, s.v)
		}
	}
	if len(items) == 0 {
		d.errf(w, "approvers is empty: list the groups whose members may decide this tool's calls, or leave it out")
	}
	return o
}

// approvalsCount decodes approvals: how many distinct people approve.
func (d *decoder) approvalsCount(f entry, t *toolSpec) {
	c := d.count(f.Value, f.Where, "write 1 for one person, 2 for two")
	if c.set && c.v == 0 {
		d.errf(f.Where, "approvals is 0: a call is approved by at least one person; write 1, or 2 for two people")
		return
	}
	t.approvals = c
}

// Approvers returns, by tool name, the approver groups the file gives
// (approvers: [finance, ...]): who may decide its calls in the inbox, with
// inbox.Approvers and the program's groups. A tool without approvers is
// not in the map; nil when no tool has them. The map is a new copy.
func (c *File) Approvers() map[string][]string {
	var out map[string][]string
	for _, name := range c.names {
		if t := c.tools[name]; t.approvers.set {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = slices.Clone(t.approvers.v)
		}
	}
	return out
}

// Quorum returns, by tool name, how many distinct people must approve a
// request of the tool (approvals: 2), for approval.Grants.Quorum or a
// redisstore Grants' Quorum. A tool without approvals, or with 1, is not
// in the map; nil when none needs more than one. The map is a new copy.
func (c *File) Quorum() map[string]int {
	out := map[string]int{}
	for _, name := range c.names {
		if t := c.tools[name]; t.approvals.set && t.approvals.v > 1 {
			out[name] = t.approvals.v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return maps.Clone(out)
}
