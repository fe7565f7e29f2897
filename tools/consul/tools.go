//go:build tools

// Package tools pins the Consul release the tests and demo run.
package tools

import _ "github.com/hashicorp/consul"
