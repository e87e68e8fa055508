package kubeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// auditPolicy records every request at Metadata level when its response
// starts (long-running requests: watches) and when it is complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`

// AuditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditFlags writes the policy and returns the kube-apiserver flags that
// log every request as JSON lines to audit.log in the working directory.
func (s *Server) auditFlags() ([]string, error) {
	policy := filepath.Join(s.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("kubeapi: audit policy: %w", err)
	}
	s.auditLog = filepath.Join(s.dir, "audit.log")
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + s.auditLog,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
	}, nil
}

// AuditEvents reads every audit event logged so far (Options.Audit).
func (s *Server) AuditEvents() ([]AuditEvent, error) {
	if s.auditLog == "" {
		return nil, fmt.Errorf("kubeapi: audit log not enabled (Options.Audit)")
	}
	raw, err := os.ReadFile(s.auditLog)
	if err != nil {
		return nil, fmt.Errorf("kubeapi: audit log: %w", err)
	}
	var out []AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ev AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("kubeapi: audit log %s line %d: %w", s.auditLog, line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kubeapi: audit log %s: %w", s.auditLog, err)
	}
	return out, nil
}
