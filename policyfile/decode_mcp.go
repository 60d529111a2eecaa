package policyfile

import (
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// The mcp_servers section: the MCP servers the program knows by name
// (mcptools.WithServerName), and whether their tool annotations are
// trusted.

var mcpServerFields = []string{"trusted"}

// mcpServerSpec is one entry under mcp_servers.
type mcpServerSpec struct {
	name    string
	at      yamlread.Pos
	trusted opt[bool]
}

func (d *decoder) mcpServers(e entry, c *File) {
	for _, se := range d.Mapping(e.Value, e.Where) {
		if se.Key == "" {
			d.errf(se.Where, "an MCP server needs a name: the one the program gives it with mcptools.WithServerName")
			continue
		}
		s := &mcpServerSpec{name: se.Key, at: se.Where.at}
		for _, f := range d.Mapping(se.Value, se.Where) {
			switch f.Key {
			case "trusted":
				s.trusted = d.boolean(f.Value, f.Where)
			default:
				d.unknown(f, mcpServerFields)
			}
		}
		if c.mcpServers == nil {
			c.mcpServers = map[string]*mcpServerSpec{}
		}
		c.mcpServers[se.Key] = s
	}
}

// trusts reports whether the file trusts the annotations of the MCP server
// the program named server.
func (c *File) trusts(server string) bool {
	s := c.mcpServers[server]
	return server != "" && s != nil && s.trusted.v
}
