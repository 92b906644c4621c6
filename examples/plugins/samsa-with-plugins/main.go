// Command samsa-with-plugins is a samsa broker with the example plug-ins:
// records of "orders" are routed by their "region" header to
// orders-eu/orders-us (others to orders-unrouted), and records of "events"
// are copied upper-cased and enriched to "events-enriched". Configure it
// as `samsa serve` (SAMSA_* variables, $SAMSA_CONFIG).
package main

import (
	"log"

	"github.com/samsa-io/samsa/examples/plugins/enrich"
	"github.com/samsa-io/samsa/examples/plugins/router"
	"github.com/samsa-io/samsa/pkg/samsa"
)

func main() {
	orders := router.New("orders", "region", map[string]string{"eu": "orders-eu", "us": "orders-us"}, "orders-unrouted")
	if err := samsa.Run(samsa.Options{}, orders, enrich.New("events", "events-enriched")); err != nil {
		log.Fatal(err)
	}
}
