package canonical_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/canonical"
)

// Regression: an input nested 9,000 objects deep with 100-byte keys (945 KB,
// well within what a model may send) made JSON allocate about 4 GB: it
// built the path of every key, for an error message, at every depth, so
// its cost grew with the square of the input. The path is joined only for
// an error now.
func TestDeepInputWithLongKeysCostsMemoryInProportionToItsSize(t *testing.T) {
	key := strings.Repeat("k", 100)
	const depth = 9000
	in := strings.Repeat(`{"`+key+`":`, depth) + "1" + strings.Repeat("}", depth)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := canonical.JSON(in)
	runtime.ReadMemStats(&after)
	if err != nil || out != in {
		t.Fatalf("JSON of a deep input: %d bytes, %v; want it unchanged", len(out), err)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(in)); got > limit {
		t.Errorf("JSON of a %d-byte input allocated %d MB; want at most %d MB (64 times its size)", len(in), got>>20, limit>>20)
	}

	// The error still names the whole path down to a repeated key.
	deep := strings.Repeat(`{"a":`, 3) + `{"k":1,"K":2}` + strings.Repeat("}", 3)
	if _, err := canonical.JSON(deep); err == nil || !strings.Contains(err.Error(), `"a.a.a.K"`) {
		t.Errorf("JSON(%s) = %v; want the repeated key named by its path a.a.a.K", deep, err)
	}
}
