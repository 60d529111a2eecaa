package main

import (
	"fmt"
	"image/color"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

// sampleEvery is the width of one bin of Result.Rate.
const sampleEvery = 100 * time.Millisecond

// sampleRate counts srv's requests every sampleEvery from began until the
// returned function is called, which returns the requests per second of
// each bin.
func sampleRate(srv *toolsafetest.Upstream, began time.Time) func() []float64 {
	var mu sync.Mutex
	var counts []int
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				counts = append(counts, srv.Requests(""))
				mu.Unlock()
			}
		}
	}()
	return func() []float64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		rate := make([]float64, len(counts))
		prev := 0
		for i, n := range counts {
			rate[i] = float64(n-prev) / sampleEvery.Seconds()
			prev = n
		}
		return rate
	}
}

// lineColors are the colours of the chart's lines, one per set of
// policies, in the order of AllPolicies.
var lineColors = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// Chart draws, into the SVG file path, the requests per second that reached
// the upstream over time in each of results (storms of one fault), one line
// each, named by its policies.
func Chart(path string, results []Result) error {
	if len(results) == 0 {
		return fmt.Errorf("no storm to draw")
	}
	p := plot.New()
	c := results[0].Config
	p.Title.Text = fmt.Sprintf("%d callers against an upstream that is down (%s)", c.Callers, c.Fault.Name)
	p.X.Label.Text = "seconds from the start of the storm"
	p.Y.Label.Text = "requests per second reaching the upstream"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for i, r := range results {
		pts := make(plotter.XYs, len(r.Rate))
		for j, v := range r.Rate {
			pts[j].X = float64(j+1) * sampleEvery.Seconds()
			pts[j].Y = v
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = lineColors[i%len(lineColors)]
		line.Width = vg.Points(1.5)
		if r.Config.Policies.Budget {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(r.Config.Policies.Name, line)
	}
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Legend.YOffs = -vg.Points(4)
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}
