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
func (r *Run) groupedBars(path, title, yLabel string, configs []ConfigInfo, rows [][2]string, labels []string) error {
	st := Summarise(r.Measurements)
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	n := len(configs)
	width := vg.Points(float64(60) / float64(n))
	for i, c := range configs {
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

// WriteCharts draws the throughput, latency and memory charts into dir
// (and, for the replicated part, a CPU chart), and returns their file
// names: prefix-*.svg for the single-node configurations,
// prefix-replicated-*.svg for the clusters.
func (r *Run) WriteCharts(dir, prefix string) ([]string, error) {
	single, replicated := r.split()
	files, err := r.writeCharts(dir, prefix, "w3 = end-to-end, others produce", single)
	if err != nil {
		return files, err
	}
	more, err := r.writeCharts(dir, prefix+"-replicated", fmt.Sprintf("R2 = end-to-end at %d records/s, R1 produce; %d brokers", ReplicatedRate, ClusterBrokers), replicated)
	return append(files, more...), err
}

// chartLabel is a short x-axis label for a workload: "w3" for the
// numbered single-node ones, "R2" for the replicated ones.
func chartLabel(workload string) string {
	short := strings.SplitN(workload, " ", 2)[0]
	if short != "" && short[0] >= '0' && short[0] <= '9' {
		return "w" + short
	}
	return short
}

// writeCharts draws configs' charts; latencyNote says which workloads
// the latency bars are.
func (r *Run) writeCharts(dir, prefix, latencyNote string, configs []ConfigInfo) ([]string, error) {
	if len(configs) == 0 {
		return nil, nil
	}
	var thr, lat, res, cpu, txn, txnRead [][2]string
	var thrL, latL, resL, cpuL, txnL, txnReadL []string
	for _, row := range r.rowsOf(configs) {
		short := chartLabel(row.Workload)
		key := [2]string{row.Workload, row.Metric}
		switch {
		case row.Unit == "txn/s":
			txn = append(txn, key)
			txnL = append(txnL, short)
		case row.Unit == "records/s" && strings.HasPrefix(row.Metric, "read_"):
			txnRead = append(txnRead, key)
			txnReadL = append(txnReadL, strings.TrimSuffix(row.Metric, " records/s"))
		case row.Metric == "records/s" || row.Metric == "received records/s":
			thr = append(thr, key)
			thrL = append(thrL, short)
		case row.Unit == "ms" && strings.Contains(row.Metric, "p") && !strings.HasPrefix(row.Metric, "generator"):
			lat = append(lat, key)
			latL = append(latL, fmt.Sprintf("%s %s", short, strings.TrimPrefix(strings.TrimPrefix(row.Metric, "e2e "), "produce ")))
		case row.Unit == "MiB":
			res = append(res, key)
			resL = append(resL, strings.Replace(strings.TrimSuffix(row.Metric, " (whole run)"), " (3 summed)", " sum", 1))
		case row.Unit == "CPU-s/M":
			cpu = append(cpu, key)
			cpuL = append(cpuL, short)
		}
	}
	var files []string
	for _, c := range []struct {
		name, title, y string
		rows           [][2]string
		labels         []string
	}{
		{prefix + "-throughput.svg", "Throughput by workload (higher is better)", "records/s", thr, thrL},
		{prefix + "-latency.svg", "Latency percentiles (lower is better; " + latencyNote + ")", "ms", lat, latL},
		{prefix + "-memory.svg", "Broker resident memory (lower is better)", "MiB", res, resL},
		{prefix + "-cpu.svg", "Brokers' CPU per million records, summed (lower is better)", "CPU-s", cpu, cpuL},
		{prefix + "-transactions.svg", "Transactions per second, 1/10/100 records each (higher is better)", "txn/s", txn, txnL},
		{prefix + "-txn-consume.svg", "Reading a transactional topic (w13; higher is better)", "records/s", txnRead, txnReadL},
	} {
		if len(c.rows) == 0 {
			continue
		}
		if err := r.groupedBars(filepath.Join(dir, c.name), c.title, c.y, configs, c.rows, c.labels); err != nil {
			return files, err
		}
		files = append(files, c.name)
	}
	return files, nil
}
