package main

import (
	"fmt"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plots draws bandwidth against transfer size and µs per launch against goroutines, for
// gpuactor on the GPU (the simulator when there is none) and the C++ baseline. A run without
// copy rows gets no bandwidth plot.
func plots(dir string, rep *Report) error {
	rep = &Report{Meta: rep.Meta, Results: collapseRounds(rep.Results)} // one point per row
	backend := "sim"
	if slices.Contains(rep.Meta.Backends, "cuda") {
		backend = "cuda"
	}
	title := rep.Meta.GPU
	if title == "" {
		title = "simulator"
	}
	if err := bandwidthPlot(filepath.Join(dir, "bandwidth.svg"), title, backend, rep); err != nil {
		return err
	}
	if err := launchPlot(filepath.Join(dir, "launch.svg"), title, backend, rep); err != nil {
		return err
	}
	return scalingPlot(filepath.Join(dir, "scaling.svg"), title, backend, rep)
}

// scalingPlot draws fan-out throughput against the number of devices, over one GPU driven
// from C++ (over one device through the group where C++ did not run), in process and
// isolated, beside N itself and the target. A run without fan-out rows over two devices or
// more gets no plot.
func scalingPlot(path, title, backend string, rep *Report) error {
	p := plot.New()
	p.Title.Text = "Fan-out scaling, " + title
	p.X.Label.Text = "devices"
	p.Y.Label.Text = "jobs/s ÷ one GPU"
	p.Legend.Top, p.Legend.Left = true, true
	maxN, lines := 0, 0
	for i, prefix := range []string{"", isolatedPrefix} {
		pts := scalingPoints(rep, backend, prefix)
		if !overSeveral(pts) {
			continue
		}
		var xys plotter.XYs
		over := "C++ on one GPU"
		for _, s := range pts {
			y := s.overCpp
			if y == 0 {
				y, over = s.overOne, "one device"
			}
			if y > 0 {
				xys = append(xys, plotter.XY{X: float64(s.n), Y: y})
				maxN = max(maxN, s.n)
			}
		}
		if len(xys) == 0 {
			continue // no ratio to draw: isolated rows on the simulator have no single-device row
		}
		name := "gpuactor group, in process"
		if prefix != "" {
			name = "gpuactor group, isolated devices"
		}
		if err := addLine(p, name+" ÷ "+over, xys, i, false); err != nil {
			return err
		}
		lines++
	}
	if lines == 0 {
		return nil
	}
	ideal := plotter.XYs{{X: 1, Y: 1}, {X: float64(maxN), Y: float64(maxN)}}
	target := plotter.XYs{{X: 1, Y: scalingTarget}, {X: float64(maxN), Y: scalingTarget * float64(maxN)}}
	if err := addLine(p, "N", ideal, 2, true); err != nil {
		return err
	}
	if err := addLine(p, fmt.Sprintf("target %.2f × N", scalingTarget), target, 3, true); err != nil {
		return err
	}
	p.X.Min, p.Y.Min = 0, 0
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func bandwidthPlot(path, title, backend string, rep *Report) error {
	p := plot.New()
	p.Title.Text = "Copy bandwidth, " + title
	p.X.Label.Text = "transfer size (bytes)"
	p.Y.Label.Text = "GB/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	i := 0
	for _, sc := range []string{"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "h2d_staged", "d2h_staged"} {
		for _, impl := range []string{"gpuactor", "cpp"} {
			var xys plotter.XYs
			for _, r := range rep.Results {
				if r.Scenario != sc || r.Impl != "gpuactor" || r.Backend != backend || !r.Checked || r.Size == 0 {
					continue
				}
				y := &r.Value
				if impl == "cpp" {
					if sc == "h2d_staged" || sc == "d2h_staged" {
						continue // staged rows compare with the pinned C++ lines already drawn
					}
					y = lookup(rep, "cpp", r, false) // the mean of the baseline's passes
				}
				if y != nil {
					xys = append(xys, plotter.XY{X: float64(r.Size), Y: *y})
				}
			}
			if len(xys) == 0 {
				continue
			}
			if err := addLine(p, fmt.Sprintf("%s %s", sc, impl), xys, i/2, impl == "cpp"); err != nil {
				return err
			}
			i++
		}
	}
	if i == 0 {
		return nil // a run of -scenarios without copies: nothing to draw, and a log axis refuses an empty range
	}
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.08 // room above the top line
	return p.Save(9*vg.Inch, 5.5*vg.Inch, path)
}

func launchPlot(path, title, backend string, rep *Report) error {
	p := plot.New()
	p.Title.Text = "Empty-kernel launch cost, " + title
	p.X.Label.Text = "goroutines launching at once"
	p.Y.Label.Text = "µs per launch"
	p.Y.Min = 0
	p.Legend.Left = true // the lines run along the top; the bottom left is empty
	p.X.Min, p.X.Max = 0, 66
	var xys plotter.XYs
	for _, r := range rep.Results {
		if r.Impl != "gpuactor" || r.Backend != backend || !r.Checked {
			continue
		}
		switch r.Scenario {
		case "launch_enqueue":
			xys = append(xys, plotter.XY{X: 1, Y: r.Value})
		case "launch_pipelined_8":
			xys = append(xys, plotter.XY{X: 8, Y: r.Value})
		case "launch_pipelined_64":
			xys = append(xys, plotter.XY{X: 64, Y: r.Value})
		}
	}
	if len(xys) > 0 {
		if err := addLine(p, "gpuactor (pipelined launches)", xys, 0, false); err != nil {
			return err
		}
	}
	if c := lookup(rep, "cpp", Result{Scenario: "launch_enqueue"}, false); c != nil {
		if err := addLine(p, "C++ single thread", plotter.XYs{{X: 1, Y: *c}, {X: 64, Y: *c}}, 1, true); err != nil {
			return err
		}
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func addLine(p *plot.Plot, name string, xys plotter.XYs, color int, dashed bool) error {
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, pts.Color = plotutil.Color(color), plotutil.Color(color)
	pts.Shape = plotutil.Shape(color)
	if dashed {
		l.Dashes = plotutil.Dashes(1)
	}
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return nil
}
