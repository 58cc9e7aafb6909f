package worker

// Boxed holds an Option, for a public package to define its option type over (type Option
// worker.Boxed) without naming this package's types in its API; the package that starts the
// worker converts back and calls Unbox.
type Boxed struct{ opt Option }

// Box puts o in a Boxed.
func Box(o Option) Boxed { return Boxed{opt: o} }

// Unbox is the Option Box was given; nil for a zero Boxed.
func (b Boxed) Unbox() Option { return b.opt }
