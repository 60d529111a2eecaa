package typednil_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/internal/typednil"
)

type tool struct{}

func (*tool) Name() string { return "t" }

func TestIs(t *testing.T) {
	var (
		ptr *tool
		fn  func()
		m   map[string]int
		s   []int
		ch  chan int
	)
	for _, tt := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, true},
		{"a nil pointer", ptr, true},
		{"a nil func", fn, true},
		{"a nil map", m, true},
		{"a nil slice", s, true},
		{"a nil channel", ch, true},
		{"a pointer", &tool{}, false},
		{"a func", func() {}, false},
		{"an empty map", map[string]int{}, false},
		{"a struct", tool{}, false},
		{"zero", 0, false},
		{"the empty string", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := typednil.Is(tt.v); got != tt.want {
				t.Errorf("Is(%#v) = %v; want %v", tt.v, got, tt.want)
			}
		})
	}
}
