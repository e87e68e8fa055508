package controller

import (
	"sort"
	"sync"
)

// pendingPorts remembers which objects wait for which logical switch
// ports, so an LSP appearing in the NB requeues exactly those objects.
type pendingPorts struct {
	mu     sync.Mutex
	byPort map[string]map[string]struct{} // lsp -> keys
	byKey  map[string][]string            // key -> lsps
}

func newPendingPorts() *pendingPorts {
	return &pendingPorts{byPort: map[string]map[string]struct{}{}, byKey: map[string][]string{}}
}

// set replaces the ports key waits for (nil: none).
func (p *pendingPorts) set(key string, ports []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, lsp := range p.byKey[key] {
		if keys := p.byPort[lsp]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(p.byPort, lsp)
			}
		}
	}
	delete(p.byKey, key)
	if len(ports) == 0 {
		return
	}
	p.byKey[key] = append([]string(nil), ports...)
	for _, lsp := range ports {
		if p.byPort[lsp] == nil {
			p.byPort[lsp] = map[string]struct{}{}
		}
		p.byPort[lsp][key] = struct{}{}
	}
}

// waiting returns the keys waiting for lsp, sorted.
func (p *pendingPorts) waiting(lsp string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.byPort[lsp]))
	for k := range p.byPort[lsp] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
