package launcher

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Command is the hidden subcommand of the launcher, in agentls and in
// agentls-sandbox alike:
//
//	agentls __sandbox POLICY-JSON SHELL ARGS...
const Command = "__sandbox"

// forwarderCommand is the hidden subcommand of the proxy forwarder inside
// the network namespace (fd 3: the listener on 127.0.0.1; args: the
// proxy's unix socket and the pid of the shell it serves).
const forwarderCommand = "__sandbox-forward"

// Format is the version of Policy's meaning. Bump it when a field changes
// meaning; a field added or removed is caught without it (Decode refuses
// unknown fields, Encode always writes every one).
const Format = 1

// Policy is what the launcher applies to itself before it runs the shell.
type Policy struct {
	Format    int      `json:"format"`    // must be Format
	Write     []string `json:"write"`     // may be written (Landlock)
	ReadOnly  []string `json:"readOnly"`  // bound read-only over themselves
	Pin       []string `json:"pin"`       // bound over themselves, writable: cannot be renamed or removed
	DenyDirs  []string `json:"denyDirs"`  // covered by an empty unreadable tmpfs
	DenyFiles []string `json:"denyFiles"` // covered by Blank
	Blank     string   `json:"blank"`     // an empty file with mode 000
	Proxy     string   `json:"proxy"`     // unix socket of the filtering proxy
	Dir       string   `json:"dir"`       // the working directory, entered again after the mounts
}

// Encode is the policy as the launcher's argument, stamped with Format.
func (p Policy) Encode() (string, error) {
	p.Format = Format
	js, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("sandbox policy: %w", err)
	}
	return string(js), nil
}

// Decode reads a policy made by Encode of the same format. Anything else
// is refused: a launcher of another agentls build could otherwise drop a
// restriction it does not know.
func Decode(s string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("policy: %w (is this launcher of the same build as agentls?)", err)
	}
	if dec.More() {
		return Policy{}, fmt.Errorf("policy: trailing data after the JSON object")
	}
	if p.Format != Format {
		return Policy{}, fmt.Errorf("policy format %d, this launcher reads %d: agentls and its launcher are of different builds; install both from one build", p.Format, Format)
	}
	return p, nil
}
