package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsoleInChromium walks the console as a user would, in one
// headless Chromium against one broker: the cluster page, creating a
// topic, reading a record in the message browser, producing one, and a
// group's lag falling as its consumer reads, then an offset reset.
func TestConsoleInChromium(t *testing.T) {
	ctx := browser(t)
	b := startBroker(t)
	adm := b.admin(t)

	t.Run("cluster page", func(t *testing.T) {
		run(t, ctx, "cluster page", chromedp.Navigate(b.base+"/"), chromedp.WaitVisible(chromedp.ID("brokers")))
		brokers := get(t, ctx, "brokers table", chromedp.Text(chromedp.CSS("#brokers tbody")))
		if !strings.Contains(brokers, b.kafka) || !strings.Contains(brokers, "controller") {
			t.Errorf("brokers table %q does not show broker %s as controller", brokers, b.kafka)
		}
		screenshot(t, ctx, "cluster")
	})

	t.Run("create topic", func(t *testing.T) {
		run(t, ctx, "create a topic through the form", chromedp.Navigate(b.base+"/topics"),
			chromedp.WaitVisible(chromedp.ID("create-topic")),
			chromedp.SendKeys(chromedp.ID("new-topic-name"), "orders"),
			chromedp.SendKeys(chromedp.ID("new-topic-partitions"), "3"),
			chromedp.Click(chromedp.ID("create-topic-submit")),
			chromedp.WaitVisible(chromedp.ID("partitions")))
		waitText(t, ctx, "#flash", "Topic orders created.")
		rows := get(t, ctx, "count partitions", chromedp.Evaluate[int](`document.querySelectorAll("#partitions tbody tr[data-partition]").length`))
		if rows != 3 {
			t.Errorf("topic page shows %d partitions, want 3", rows)
		}
		td, err := adm.ListTopics(context.Background(), "orders")
		if err != nil || td["orders"].Err != nil || len(td["orders"].Partitions) != 3 {
			t.Fatalf("after creating through the console, kadm sees %+v, %v", td["orders"], err)
		}
		run(t, ctx, "the topic list", chromedp.Navigate(b.base+"/topics"), chromedp.WaitVisible(chromedp.CSS(`tr[data-topic="orders"]`)))
	})

	t.Run("message browser", func(t *testing.T) {
		cl := b.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		value := `{"id":42,"item":"<script>document.title='pwned'</script>"}`
		rec := &kgo.Record{Topic: "orders", Partition: 1, Key: []byte("order-42"), Value: []byte(value),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("e2e")}}}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "browse partition 1 as JSON", chromedp.Navigate(b.base+"/topics/orders/messages?partition=1&format=json"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-offset="0"]`)))
		row := get(t, ctx, "the record's row", chromedp.Text(chromedp.CSS(`tr[data-offset="0"]`)))
		scripts := get(t, ctx, "script elements", chromedp.Evaluate[int](`document.querySelectorAll("#messages script").length`))
		title := get(t, ctx, "title", chromedp.Title())
		for _, want := range []string{"order-42", `"id": 42`, "<script>document.title='pwned'</script>", "source", "e2e"} {
			if !strings.Contains(row, want) {
				t.Errorf("message row %q lacks %q", row, want)
			}
		}
		if scripts != 0 || strings.Contains(title, "pwned") {
			t.Errorf("a record's value became markup: %d script elements, title %q", scripts, title)
		}
		screenshot(t, ctx, "messages")
		run(t, ctx, "browse as hex", chromedp.Navigate(b.base+"/topics/orders/messages?partition=1&format=hex"))
		hexRow := get(t, ctx, "the record's row as hex", chromedp.Text(chromedp.CSS(`tr[data-offset="0"]`)))
		if !strings.Contains(hexRow, "7b 22 69 64") { // {"id
			t.Errorf("hex view %q lacks the value's bytes", hexRow)
		}
	})

	t.Run("produce a test record", func(t *testing.T) {
		run(t, ctx, "produce through the form", chromedp.Navigate(b.base+"/topics/orders"),
			chromedp.WaitVisible(chromedp.ID("produce")),
			chromedp.SendKeys(chromedp.ID("produce-partition"), "2"),
			chromedp.SendKeys(chromedp.ID("produce-key"), "k-console"),
			chromedp.SendKeys(chromedp.ID("produce-value"), "hello from the console"),
			chromedp.SendKeys(chromedp.ID("produce-headers"), "trace: abc"),
			chromedp.Click(chromedp.ID("produce-submit")),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-offset="0"]`)))
		waitText(t, ctx, "#flash", "Produced to partition 2 at offset 0.")
		cl := b.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {2: kgo.NewOffset().AtStart()}}))
		pctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		fs := cl.PollFetches(pctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		recs := fs.Records()
		if len(recs) != 1 || string(recs[0].Value) != "hello from the console" || string(recs[0].Key) != "k-console" ||
			len(recs[0].Headers) != 1 || recs[0].Headers[0].Key != "trace" || string(recs[0].Headers[0].Value) != "abc" {
			t.Fatalf("franz-go reads %+v from partition 2", recs)
		}
	})

	t.Run("messages per second", func(t *testing.T) {
		run(t, ctx, "topic page", chromedp.Navigate(b.base+"/topics/orders"), chromedp.WaitVisible(chromedp.ID("rate-chart")))
		// A first sample is taken as the page loads; records produced
		// now show as a rate above zero at the next one.
		get(t, ctx, "first sample", chromedp.Poll[bool](`document.querySelector("#rate-chart .chart-label").textContent !== "measuring…"`))
		cl := b.client(t)
		for i := range 100 {
			cl.Produce(context.Background(), &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "r%d", i)}, nil)
		}
		if err := cl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		get(t, ctx, "a rate above zero", chromedp.Poll[bool](`/peak [1-9]/.test(document.querySelector("#rate-chart .chart-label").textContent)`))
		if n := get(t, ctx, "chart", chromedp.Evaluate[int](`document.querySelectorAll("#rate-chart svg polyline").length`)); n != 1 {
			t.Errorf("rate chart has %d lines, want 1", n)
		}
	})

	t.Run("group lag falls as the consumer reads", func(t *testing.T) {
		groupLag(t, ctx, b)
	})
}

// groupLag produces 20 records, lets a group consumer read and commit 5,
// then the rest, and watches the console's lag (refreshed by htmx, no
// reload) go from 20 to 15 to 0; then resets the idle group to the
// earliest offset, first as a dry run.
func groupLag(t *testing.T, ctx context.Context, b *consoleBroker) {
	adm := b.admin(t)
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "lagged"); err != nil {
		t.Fatal(err)
	}
	producer := b.client(t)
	for i := range 20 {
		if err := producer.ProduceSync(context.Background(), &kgo.Record{Topic: "lagged", Value: []byte{byte('a' + i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The group starts with a commit at 0: lag 20 before anyone reads.
	var start kadm.Offsets
	start.AddOffset("lagged", 0, 0, -1)
	if _, err := adm.CommitOffsets(context.Background(), "readers", start); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "group page", chromedp.Navigate(b.base+"/groups/readers"), chromedp.WaitVisible(chromedp.ID("lag-table")))
	waitText(t, ctx, "#total-lag", "20")

	consumer, err := kgo.NewClient(kgo.SeedBrokers(b.kafka), kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("lagged"),
		kgo.DisableAutoCommit(), kgo.ClientID("e2e-reader"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	read := func(n int) {
		t.Helper()
		pctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for got := 0; got < n; {
			fs := consumer.PollRecords(pctx, n-got)
			if err := fs.Err0(); err != nil {
				t.Fatalf("consumer: %v", err)
			}
			recs := fs.Records()
			if err := consumer.CommitRecords(pctx, recs...); err != nil {
				t.Fatal(err)
			}
			got += len(recs)
		}
	}
	read(5)
	waitText(t, ctx, "#total-lag", "15") // the page refreshes itself
	run(t, ctx, "members", chromedp.Navigate(b.base+"/groups/readers"), chromedp.WaitVisible(chromedp.ID("members")))
	members := get(t, ctx, "members table", chromedp.Text(chromedp.ID("members")))
	if !strings.Contains(members, "e2e-reader") || !strings.Contains(members, "lagged: 0") {
		t.Errorf("members table %q does not show e2e-reader assigned lagged: 0", members)
	}
	read(15)
	waitText(t, ctx, "#total-lag", "0")
	waitText(t, ctx, "#lag-chart .chart-label", "0 messages behind (peak 15)")
	screenshot(t, ctx, "group")
	consumer.Close() // leaves the group: it is Empty and may be reset

	// Dry run: the plan shows 0, nothing is committed.
	run(t, ctx, "reset dry run", chromedp.Navigate(b.base+"/groups/readers"), chromedp.WaitVisible(chromedp.ID("reset")))
	waitText(t, ctx, "#group-state", "Empty")
	run(t, ctx, "reset dry run", chromedp.Navigate(b.base+"/groups/readers"), chromedp.WaitVisible(chromedp.ID("reset")),
		chromedp.SetValue(chromedp.ID("reset-to"), "earliest"),
		chromedp.Click(chromedp.ID("reset-submit")), chromedp.WaitVisible(chromedp.ID("reset-plan")))
	waitText(t, ctx, "#reset-result", "Dry run: nothing committed")
	waitText(t, ctx, `#reset-plan tr[data-partition="lagged-0"] td:nth-child(4)`, "0")
	if o := committed(t, adm); o != 20 {
		t.Fatalf("a dry run moved the commit to %d", o)
	}
	// The real reset asks for confirmation in a dialog; accept it.
	dctx, stopDialogs := context.WithCancel(ctx)
	defer stopDialogs()
	dialogs := chromedp.Events(dctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			go func() {
				_ = chromedp.Do(dctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
					return err
				}))
			}()
		}
	}()
	run(t, ctx, "reset", chromedp.SetValue(chromedp.ID("reset-to"), "earliest"),
		chromedp.RemoveAttribute(chromedp.ID("reset-dryrun"), "checked"),
		chromedp.Click(chromedp.ID("reset-submit")))
	waitText(t, ctx, "#reset-result", "Offsets reset")
	waitText(t, ctx, "#total-lag", "20")
	if o := committed(t, adm); o != 0 {
		t.Fatalf("after the reset the commit is %d, want 0", o)
	}
}

func committed(t *testing.T, adm *kadm.Client) int64 {
	t.Helper()
	os, err := adm.FetchOffsets(context.Background(), "readers")
	if err != nil {
		t.Fatal(err)
	}
	o, ok := os.Lookup("lagged", 0)
	if !ok || o.Err != nil {
		t.Fatalf("no commit for lagged-0: %+v", o)
	}
	return o.At
}
