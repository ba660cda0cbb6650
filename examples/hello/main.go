// Command hello greets. It carries a deliberate mistake that `go vet`
// reports, so the example pipeline's verify node has something to find.
package main

import "fmt"

func main() {
	name := "world"
	fmt.Printf("hello, %d\n", name)
}
