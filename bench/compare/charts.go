package compare

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// groupedBars draws one group per (workload, metric) row and one bar per
// configuration in each group, and saves it as SVG.
func (r *Run) groupedBars(path, title, yLabel string, rows [][2]string, labels []string) error {
	st := Summarise(r.Measurements)
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	n := len(r.Configs)
	width := vg.Points(float64(60) / float64(n))
	for i, c := range r.Configs {
		vals := make(plotter.Values, len(rows))
		for j, row := range rows {
			vals[j] = st[Key{row[0], row[1], c.Name}].Mean
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = palette[i%len(palette)]
		bars.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(c.Name, bars)
	}
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = 0
	return p.Save(vg.Length(90*len(rows)+160), 9*vg.Centimeter, path)
}

// WriteCharts draws the throughput and latency charts into dir and
// returns their file names.
func (r *Run) WriteCharts(dir, prefix string) ([]string, error) {
	var thr, lat, res [][2]string
	var thrL, latL, resL []string
	for _, row := range r.rows() {
		short := strings.SplitN(row.Workload, " ", 2)[0]
		switch {
		case row.Metric == "records/s" || row.Metric == "received records/s":
			thr = append(thr, [2]string{row.Workload, row.Metric})
			thrL = append(thrL, "w"+short)
		case row.Unit == "ms" && strings.Contains(row.Metric, "p"):
			lat = append(lat, [2]string{row.Workload, row.Metric})
			latL = append(latL, fmt.Sprintf("w%s %s", short, strings.TrimPrefix(strings.TrimPrefix(row.Metric, "e2e "), "produce ")))
		case row.Unit == "MiB":
			res = append(res, [2]string{row.Workload, row.Metric})
			resL = append(resL, strings.TrimSuffix(row.Metric, " (whole run)"))
		}
	}
	var files []string
	for _, c := range []struct {
		name, title, y string
		rows           [][2]string
		labels         []string
	}{
		{prefix + "-throughput.svg", "Throughput by workload (higher is better)", "records/s", thr, thrL},
		{prefix + "-latency.svg", "Latency percentiles (lower is better; w3 = end-to-end, others produce)", "ms", lat, latL},
		{prefix + "-memory.svg", "Broker resident memory (lower is better)", "MiB", res, resL},
	} {
		if len(c.rows) == 0 {
			continue
		}
		if err := r.groupedBars(filepath.Join(dir, c.name), c.title, c.y, c.rows, c.labels); err != nil {
			return files, err
		}
		files = append(files, c.name)
	}
	return files, nil
}
