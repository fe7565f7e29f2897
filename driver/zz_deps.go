package driver

// Keeps modules other components will use pinned in go.mod until their
// real imports land (gossip: memberlist; aggregator discovery: consul/api).
import (
	_ "github.com/hashicorp/consul/api"
	_ "github.com/hashicorp/memberlist"
)
