package yamlread

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// Parse checks data against the limits, then parses it. It returns the
// problem that stopped it, or the syntax tree. A panic of the parser on
// hostile input becomes a problem too: bad input gets a problem, never a
// panic.
func Parse(data []byte) (f *ast.File, p *Problem) {
	defer func() {
		if r := recover(); r != nil {
			f, p = nil, &Problem{Message: fmt.Sprintf("the file is not valid YAML: the YAML parser failed on this input (%v)", r)}
		}
	}()
	if p := scanBytes(data); p != nil {
		return nil, p
	}
	tokens := lexer.Tokenize(string(data))
	if p := scanTokens(tokens); p != nil {
		return nil, p
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		p := &Problem{Message: "the file is not valid YAML: " + err.Error()}
		var ye yaml.Error
		if errors.As(err, &ye) {
			p.Message = "the file is not valid YAML: " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Column = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, p
	}
	return f, nil
}
