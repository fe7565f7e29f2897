package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caravan-dl/caravan/gossip"
	"github.com/caravan-dl/caravan/scheduler/live"
	humanize "github.com/dustin/go-humanize"
	"github.com/hashicorp/go-hclog"
)

// gossipFlags are how a command joins the gossip cluster as an observer.
type gossipFlags struct {
	join, keyFile, consulService, bind, name string
}

// register adds the flags, each name prefixed (`caravan scheduler` uses
// "gossip-").
func (g *gossipFlags) register(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&g.join, prefix+"join", "", "comma-separated gossip members host:port (default $CARAVAN_GOSSIP_JOIN)")
	fs.StringVar(&g.keyFile, prefix+"key-file", "", "gossip keyring file, as in the plugin's encryption_key_file (default $CARAVAN_GOSSIP_KEY_FILE)")
	fs.StringVar(&g.consulService, prefix+"consul-service", "", "find gossip members in this Consul service, e.g. caravan-gossip (CONSUL_HTTP_ADDR)")
	fs.StringVar(&g.bind, prefix+"bind", "0.0.0.0:0", "address:port the gossip observer listens on")
	fs.StringVar(&g.name, prefix+"name", "", "gossip member name (default caravan-observer-<time>)")
}

// schedulerGossip holds `caravan scheduler`'s -gossip-* flags: the
// scheduler joins gossip as an observer when -gossip-join or
// -gossip-consul-service (or $CARAVAN_GOSSIP_JOIN) is given.
var schedulerGossip gossipFlags

// startSchedulerGossip joins as an observer and hands the view to the
// scheduler's placement; without gossip flags it does nothing.
func startSchedulerGossip(s *live.Scheduler, log hclog.Logger) (stop func(), err error) {
	g := &schedulerGossip
	if orEnv(g.join, "CARAVAN_GOSSIP_JOIN", "") == "" && g.consulService == "" {
		return func() {}, nil
	}
	m, err := g.observe(log)
	if err != nil {
		return nil, fmt.Errorf("gossip: %w", err)
	}
	s.SetLinkSource(m)
	log.Info("placing on links measured by gossip", "members", len(m.View().Nodes))
	return func() {
		s.SetLinkSource(nil)
		_ = m.Leave(time.Second)
		_ = m.Shutdown()
	}, nil
}

// observe joins as an observer: a member that shares nothing.
func (g *gossipFlags) observe(log hclog.Logger) (*gossip.Member, error) {
	g.join = orEnv(g.join, "CARAVAN_GOSSIP_JOIN", "")
	g.keyFile = orEnv(g.keyFile, "CARAVAN_GOSSIP_KEY_FILE", "")
	if g.join == "" && g.consulService == "" {
		return nil, errors.New("-join or -consul-service: say where the gossip members are")
	}
	if g.keyFile == "" {
		return nil, errors.New("-key-file: the gossip keyring is required (gossip is encrypted)")
	}
	keys, err := gossip.LoadKeyFile(g.keyFile)
	if err != nil {
		return nil, err
	}
	if g.name == "" {
		g.name = fmt.Sprintf("caravan-observer-%d", time.Now().UnixNano())
	}
	c := gossip.DefaultConfig(g.name)
	c.Observer, c.Keys, c.Logger, c.ConsulService = true, keys, log, g.consulService
	if c.BindAddr, c.BindPort, err = splitBind(g.bind); err != nil {
		return nil, fmt.Errorf("-bind: %w", err)
	}
	for _, a := range strings.Split(g.join, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.Join = append(c.Join, a)
		}
	}
	return gossip.New(c)
}

func splitBind(s string) (string, int, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return "", 0, fmt.Errorf("%q is not address:port", s)
	}
	var port int
	if _, err := fmt.Sscanf(s[i+1:], "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", s)
	}
	return s[:i], port, nil
}

// runNodes is `caravan nodes`: the gossip view of every node.
func runNodes(args []string, stdout, stderr io.Writer) error {
	var g gossipFlags
	fs := flag.NewFlagSet("caravan nodes", flag.ContinueOnError)
	setUsage(fs, stderr, "caravan nodes -join host:port -key-file FILE [flags]\n\nJoins the gossip cluster as an observer and prints each node's memory, GPU use and its slowest and fastest measured link.")
	g.register(fs, "")
	wait := fs.Duration("wait", 2*time.Second, "how long to gather gossip before printing")
	asJSON := fs.Bool("json", false, "print the view as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	m, err := g.observe(hclog.New(&hclog.LoggerOptions{Name: "caravan-nodes", Level: hclog.Error, Output: stderr}))
	if err != nil {
		return err
	}
	defer func() { _ = m.Shutdown() }()
	m.SyncFrom(16)
	time.Sleep(*wait)
	v := m.View()
	_ = m.Leave(time.Second)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v.Nodes)
	}
	printNodes(stdout, v)
	return nil
}

func printNodes(w io.Writer, v gossip.View) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tMEM TOTAL\tMEM FREE\tDONATABLE\tGPUS IN USE\tSLOWEST LINK\tFASTEST LINK")
	for _, n := range v.Nodes {
		if !n.HasRes {
			continue
		}
		r := n.Resources
		links := v.NodeLinks(n.Name)
		slow, fast := "-", "-"
		if len(links) > 0 {
			slow, fast = fmtLink(v, links[0]), fmtLink(v, links[len(links)-1])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, humanize.IBytes(r.MemTotalBytes),
			humanize.IBytes(n.MemFreeBytes()), humanize.IBytes(r.MemDonatableBytes), fmtGPUs(r.GPUs), slow, fast)
	}
	_ = tw.Flush()
}

func fmtGPUs(gs []gossip.GPU) string {
	if len(gs) == 0 {
		return "none"
	}
	var frac float64
	busy := 0
	for _, g := range gs {
		frac += g.UsedFraction
		if g.UsedFraction > 0 {
			busy++
		}
	}
	return fmt.Sprintf("%.2f of %d (%d busy)", frac, len(gs), busy)
}

func fmtLink(v gossip.View, l gossip.LinkStat) string {
	s := fmt.Sprintf("%s %.0f Mbit/s", l.B, l.BandwidthBps*8/1e6)
	if rtt, ok := v.RTT(l.A, l.B); ok {
		s += fmt.Sprintf(" %.2fms", float64(rtt.Microseconds())/1000)
	}
	return s
}
