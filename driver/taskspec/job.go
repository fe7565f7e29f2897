package taskspec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Fields are the config keys of a caravan task, as the driver's schema
// names them.
var Fields = []string{"command", "args", "gpus", "gpu_fraction", "gpu_memory", "gpu_uuids", "remote_memory", "aggregator", "memory_donor", "donate_memory", "remote_memory_mode"}

// FromJob reads a task's config as Nomad's job API returns it (JSON:
// numbers are float64, lists []any). An unknown key (a typo such as
// gpu_fractoin) or a value of the wrong type is an error naming the key.
func FromJob(m map[string]any) (Config, error) {
	var c Config
	var err error
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch k {
		case "command":
			c.Command, err = text(k, v)
		case "args":
			c.Args, err = texts(k, v)
		case "gpus":
			c.GPUs, err = text(k, v)
		case "gpu_fraction":
			c.GPUFraction, err = text(k, v)
		case "gpu_memory":
			c.GPUMemory, err = text(k, v)
		case "gpu_uuids":
			c.GPUUUIDs, err = texts(k, v)
		case "remote_memory":
			c.RemoteMemory, err = text(k, v)
		case "aggregator":
			c.Aggregator, err = text(k, v)
		case "memory_donor":
			c.MemoryDonor, err = flag(k, v)
		case "donate_memory":
			c.DonateMemory, err = text(k, v)
		case "remote_memory_mode":
			c.RemoteMemoryMode, err = text(k, v)
		default:
			err = fmt.Errorf("%s: not a caravan config key (want one of %s)", k, strings.Join(Fields, ", "))
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// flag reads a boolean.
func flag(key string, v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	}
	return false, fmt.Errorf("%s: want true or false, got %T", key, v)
}

// text reads a string, or a number as its shortest text.
func text(key string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case float64:
		return number(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case bool:
		return "", fmt.Errorf("%s = %v: want a string or a number", key, x)
	}
	return "", fmt.Errorf("%s: want a string or a number, got %T", key, v)
}

func number(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// texts reads a list of strings.
func texts(key string, v any) ([]string, error) {
	switch xs := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return xs, nil
	case []any:
		out := make([]string, len(xs))
		for i, x := range xs {
			// HCL turns "${var.n}" of a number variable into a number;
			// the driver's list(string) takes it as its text, so do we.
			s, err := text(fmt.Sprintf("%s[%d]", key, i), x)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a list of strings, got %T", key, v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
