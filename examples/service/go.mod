module github.com/gpuactor/gpuactor/examples/service

go 1.26.0

require (
	github.com/gpuactor/gpuactor v0.1.0
	github.com/gpuactor/gpuactor/contrib/prometheus v0.1.0
	github.com/prometheus/client_golang v1.25.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
)
