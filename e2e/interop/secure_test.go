package main

import (
	"context"
	"os"
	"testing"
)

// The sasl_ssl cell is decided by its own step only: a main run's
// failure does not mark it, a run without a listener (-broker) leaves it
// empty, a client without a step gets a note, and a step's result lands
// in the cell, run on prefix-sasl with the small count.
func TestSaslCellPlumbing(t *testing.T) {
	r := newReport("x")
	r.failAll("checker crashed")
	if _, ok := r.Results[saslFeature]; ok {
		t.Fatal("failAll decided sasl_ssl")
	}
	runSaslStep(context.Background(), "", nil, client{name: "x"}, "p", 10000, r)
	if _, ok := r.Results[saslFeature]; ok || len(r.Notes) != 0 {
		t.Fatalf("without a listener: %+v", r)
	}
	s := &secureListener{addr: "127.0.0.1:1"}
	runSaslStep(context.Background(), "", s, client{name: "x"}, "p", 10000, r)
	if _, ok := r.Results[saslFeature]; ok || len(r.Notes) != 1 {
		t.Fatalf("without a step: %+v", r)
	}
	var gotTopic string
	var gotN int
	step := func(_ context.Context, _ string, _ *secureListener, topic string, n int) Result {
		gotTopic, gotN = topic, n
		return Result{Status: Fail, Detail: "boom"}
	}
	runSaslStep(context.Background(), "", s, client{name: "x", sasl: step}, "p", 10000, r)
	if r.Results[saslFeature].Status != Fail || gotTopic != "p-sasl" || gotN != 100 {
		t.Fatalf("step: %+v topic %q n %d", r.Results[saslFeature], gotTopic, gotN)
	}
}

func TestCheckSaslValues(t *testing.T) {
	if err := checkSaslValues([]string{"sasl-2", "sasl-0", "sasl-1"}, 3); err != nil {
		t.Fatal(err)
	}
	for _, got := range [][]string{{"sasl-0", "sasl-1"}, {"sasl-0", "sasl-1", "sasl-1"}, {"sasl-0", "sasl-1", "sasl-2", "sasl-2"}, nil} {
		if checkSaslValues(got, 3) == nil {
			t.Errorf("%v passed for 3 records", got)
		}
	}
}

// makeCerts works outside a test (failT) and writes both files.
func TestMakeCerts(t *testing.T) {
	ca, keystore, caPath, err := makeCerts(t.TempDir())
	if err != nil || ca == nil {
		t.Fatal(err)
	}
	for _, p := range []string{keystore, caPath} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if _, _, _, err := makeCerts("/nonexistent/dir"); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}
