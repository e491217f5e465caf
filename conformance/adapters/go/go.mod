module github.com/talon-sandbox/talon/conformance/adapters/go

go 1.26.0

require github.com/talon-sandbox/talon/clients/go v0.0.0

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.9.0 // indirect
)

replace github.com/talon-sandbox/talon/clients/go => ../../../clients/go
