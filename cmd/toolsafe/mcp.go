package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
)

// mcpTool is one tool of a saved tools/list: its name and the hints of its
// annotations.
type mcpTool struct {
	name  string
	hints middleware.Hints
}

// mcpList is the flag -mcp, given once per server: NAME=FILE, FILE a
// tools/list result saved as JSON ({"tools": [...]}, or the array alone).
type mcpList struct{ tools []mcpTool }

func (l *mcpList) String() string { return "" }

// maxMCPList is the most -mcp reads of one file.
const maxMCPList = 16 << 20

func (l *mcpList) Set(v string) error {
	server, path, ok := strings.Cut(v, "=")
	if !ok || server == "" || path == "" {
		return errors.New("-mcp takes NAME=FILE: the program's name for the server (mcptools.WithServerName) and its tools/list saved as JSON")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMCPList+1))
	if err != nil {
		return err
	}
	if len(data) > maxMCPList {
		return fmt.Errorf("%s is larger than %d MiB: is it a tools/list result?", path, maxMCPList>>20)
	}
	type annotations struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		Idempotent  *bool `json:"idempotentHint"`
	}
	type tool struct {
		Name        string       `json:"name"`
		Annotations *annotations `json:"annotations"`
	}
	var list struct {
		Tools []tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		// The array alone.
		if err2 := json.Unmarshal(data, &list.Tools); err2 != nil {
			return fmt.Errorf("%s is not a tools/list result ({\"tools\": [...]}): %v", path, err)
		}
	}
	for i, t := range list.Tools {
		if t.Name == "" {
			return fmt.Errorf("%s: tool %d has no name", path, i+1)
		}
		h := middleware.Hints{Server: server}
		if a := t.Annotations; a != nil {
			// As mcptools reads them: go-sdk takes an absent readOnlyHint or
			// idempotentHint for false, so only true is said.
			if a.ReadOnly != nil && *a.ReadOnly {
				h.ReadOnly = a.ReadOnly
			}
			if a.Idempotent != nil && *a.Idempotent {
				h.Idempotent = a.Idempotent
			}
			h.Destructive = a.Destructive
		}
		l.tools = append(l.tools, mcpTool{name: t.Name, hints: h})
	}
	return nil
}
