package schemaregistry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

func itoa(n int) string { return strconv.Itoa(n) }

const customerSchema = `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"int"}]}`

func srClient(t *testing.T, url string) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestFranzSRClient registers, looks up and fetches with franz-go's
// registry client, then checks that BACKWARD refuses an incompatible
// change with Confluent's 409 and NONE lets it in.
func TestFranzSRClient(t *testing.T) {
	b := startBroker(t)
	cl := srClient(t, b.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	created, err := cl.CreateSchema(ctx, "customers-value", sr.Schema{Schema: customerSchema})
	if err != nil {
		t.Fatalf("CreateSchema: %v", err)
	}
	if created.ID <= 0 || created.Version != 1 || created.Subject != "customers-value" {
		t.Errorf("created %+v, want version 1 of customers-value with an id", created)
	}
	looked, err := cl.LookupSchema(ctx, "customers-value", sr.Schema{Schema: customerSchema})
	if err != nil || looked.ID != created.ID || looked.Version != 1 {
		t.Errorf("LookupSchema = %+v, %v; want id %d version 1", looked, err, created.ID)
	}
	byID, err := cl.SchemaByID(ctx, created.ID)
	if err != nil || byID.Schema != customerSchema || byID.Type != sr.TypeAvro {
		t.Errorf("SchemaByID = %+v, %v", byID, err)
	}
	subjects, err := cl.Subjects(ctx)
	if err != nil || len(subjects) != 1 || subjects[0] != "customers-value" {
		t.Errorf("Subjects = %v, %v", subjects, err)
	}

	// customerId changes from int to string: data written before cannot
	// be read with it.
	incompatible := `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"string"}]}`
	_, err = cl.CreateSchema(ctx, "customers-value", sr.Schema{Schema: incompatible})
	var re *sr.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != 409 || re.StatusCode != http.StatusConflict {
		t.Fatalf("incompatible schema under BACKWARD: %v, want error code 409", err)
	}
	if res := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "customers-value"); len(res) != 1 || res[0].Err != nil {
		t.Fatalf("SetCompatibility NONE: %+v", res)
	}
	second, err := cl.CreateSchema(ctx, "customers-value", sr.Schema{Schema: incompatible})
	if err != nil || second.Version != 2 || second.ID == created.ID {
		t.Errorf("incompatible schema under NONE = %+v, %v; want version 2 with a new id", second, err)
	}
	// Global stays BACKWARD.
	if res := cl.Compatibility(ctx); len(res) != 1 || res[0].Level != sr.CompatBackward {
		t.Errorf("global compatibility = %+v, want BACKWARD", res)
	}
}
