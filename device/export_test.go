package device

import "go.uber.org/zap"

// ZapOfOptionForTest is the zap logger an option leaves in a device's configuration.
func ZapOfOptionForTest(o Option) *zap.Logger {
	c := &config{}
	o(c)
	return c.logger
}

// ProgramCompilesForTest is how many times p has run the compiler.
func ProgramCompilesForTest(p *Program) int64 { return p.compiles.Load() }

// BestMatchForTest is Choose's pick among devs for want.
func BestMatchForTest(devs []Properties, want Properties) int { return bestMatch(devs, want) }
