package policyfile

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestApproverGroupsAndQuorumComeFromTheFile(t *testing.T) {
	f, err := Parse([]byte(`
tools:
  refund:
    approval: every_attempt
    approvers: [finance, support]
    approvals: 2
  lookup:
    approval: per_call
    approvers: support
  search: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Approvers()
	if len(a) != 2 || !slices.Equal(a["refund"], []string{"finance", "support"}) || !slices.Equal(a["lookup"], []string{"support"}) {
		t.Fatalf("approvers %v", a)
	}
	if q := f.Quorum(); !maps.Equal(q, map[string]int{"refund": 2}) {
		t.Fatalf("quorum %v", q)
	}
}

func TestApproversAndApprovalsThatCannotWorkAreProblems(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"tools:\n  refund:\n    approvers: [finance]\n", "tools.refund.approvers: approvers name who decides refund's calls, and it asks nobody"},
		{"tools:\n  refund:\n    approval: per_call\n    approvals: 0\n", "approvals is 0"},
		{"tools:\n  refund:\n    approvals: 2\n", "approvals: 2 asks 2 people, and refund asks nobody"},
		{"tools:\n  refund:\n    approval: per_call\n    approvers: []\n", "approvers is empty"},
		{"tools:\n  refund:\n    approval: per_call\n    approverz: [x]\n", "approvers"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.yaml, err, c.want)
		}
	}
}
