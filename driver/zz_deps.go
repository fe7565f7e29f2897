// Package driver is the caravan Nomad task driver.
package driver

// Temporary: keeps pinned dependencies in go.mod until real imports land.
// Delete once the driver imports these itself.
import (
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	_ "github.com/hashicorp/consul/api"
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/hashicorp/memberlist"
	_ "github.com/hashicorp/nomad/api"
	_ "github.com/hashicorp/nomad/drivers/shared/executor"
	_ "github.com/hashicorp/nomad/plugins"
	_ "github.com/hashicorp/nomad/plugins/drivers"
	_ "github.com/hashicorp/nomad/plugins/drivers/testutils"
)
