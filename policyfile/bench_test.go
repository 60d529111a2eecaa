package policyfile_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/policyfile"
)

// BenchmarkParse measures Parse on a realistic large file (500 tools over
// 20 dependencies, a schema on every other one: 125 KiB), one four times
// larger, and the shapes near the limits that are hardest for the YAML
// parser. Run it with
//
//	go test -run '^$' -bench BenchmarkParse -benchmem ./policyfile
func BenchmarkParse(b *testing.B) {
	cases := []struct {
		name string
		yaml string
	}{{"500 tools", realistic(500)}, {"2000 tools", realistic(2000)}}
	for _, s := range nearLimits {
		cases = append(cases, struct{ name, yaml string }{s.name, s.yaml()})
	}
	for _, c := range cases {
		data := []byte(c.yaml)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := policyfile.Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
