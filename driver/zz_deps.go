package driver

// Keeps memberlist pinned in go.mod until the gossip package imports it.
import _ "github.com/hashicorp/memberlist"
