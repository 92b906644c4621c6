package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "samsa: the broker is not built yet (see the open issues)")
	os.Exit(1)
}
