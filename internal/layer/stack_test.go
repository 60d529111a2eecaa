package layer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/middleware"
)

// Stack builds the layers it is given in the table's order, whatever the
// map's, each builder once and in that order, and leaves the others off.
func TestStackBuildsInTheTablesOrder(t *testing.T) {
	var built, ran []string
	named := func(name string) layer.Builder {
		return func() ([]middleware.Middleware, error) {
			built = append(built, name)
			return []middleware.Middleware{func(next tools.Tool) tools.Tool {
				return middleware.Func(next.Name(), "", func(ctx context.Context, input string) (string, error) {
					ran = append(ran, name)
					return next.Call(ctx, input)
				})
			}}, nil
		}
	}
	mws, err := layer.Stack(map[string]layer.Builder{"recover": named("recover"), "surface": named("surface"), "approval": named("approval")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := middleware.Chain(mws...)(middleware.Func("t", "", func(context.Context, string) (string, error) { return "", nil })).Call(context.Background(), "{}"); err != nil {
		t.Fatal(err)
	}
	want := []string{"surface", "approval", "recover"}
	if !slices.Equal(built, want) || !slices.Equal(ran, want) {
		t.Errorf("built %q, ran %q; want %q for both", built, ran, want)
	}
}

func TestStackRefusesAnUnknownLayerAndStopsAtAnError(t *testing.T) {
	if _, err := layer.Stack(map[string]layer.Builder{"surfaces": nil}); err == nil || !strings.Contains(err.Error(), `"surfaces"`) {
		t.Errorf("a layer the table does not name: err %v; want one naming it", err)
	}
	bad := errors.New("bad retry")
	var after bool
	_, err := layer.Stack(map[string]layer.Builder{
		"retry":   func() ([]middleware.Middleware, error) { return nil, bad },
		"recover": func() ([]middleware.Middleware, error) { after = true; return nil, nil },
	})
	if !errors.Is(err, bad) || after {
		t.Errorf("err %v, the layer after it built: %v; want the builder's error, and nothing built after it", err, after)
	}
}

func TestNamesIsAFreshSlice(t *testing.T) {
	n := layer.Names()
	n[0] = "changed"
	if layer.Names()[0] != "call span" {
		t.Error("changing the slice Names returned changed the table")
	}
}
