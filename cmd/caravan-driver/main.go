// Command caravan-driver is the caravan Nomad task driver plugin. Put it in
// the Nomad client's plugin_dir. Nomad's executor runs as this same binary
// re-executed with an "executor" argument, handled by the executor
// package's init before main runs.
package main

import (
	"github.com/caravan-dl/caravan/driver"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins"
)

func main() {
	plugins.Serve(func(log hclog.Logger) interface{} { return driver.New(log) })
}
