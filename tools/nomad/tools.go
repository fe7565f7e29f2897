//go:build tools

// Package tools pins the Nomad release whose binary the tests run against:
// the same version as the plugin SDK in the root module.
package tools

import _ "github.com/hashicorp/nomad"
