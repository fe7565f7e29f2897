// Command gomoddirect reads `go mod edit -json` on stdin and prints the
// module paths required directly (not // indirect), one per line.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.NewDecoder(os.Stdin).Decode(&mod); err != nil {
		fmt.Fprintln(os.Stderr, "gomoddirect:", err)
		os.Exit(1)
	}
	for _, r := range mod.Require {
		if !r.Indirect {
			fmt.Println(r.Path)
		}
	}
}
