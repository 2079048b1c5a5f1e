// Pins the AxonOps Schema Registry the integration stack builds (tests/stack/registry.py).
// `go install github.com/axonops/axonops-schema-registry/cmd/schema-registry@v0.2.1` cannot be
// used as is: it looks up the module's deprecation through the proxy's version list, which the
// proxy refuses for this module (403), while the pinned version itself is served. Building the
// command from this module needs only the version (go.sum pins every dependency).
module schemacli.stack/axonops

go 1.26.0

require github.com/axonops/axonops-schema-registry v0.2.1
