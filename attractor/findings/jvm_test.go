package findings

import "testing"

func TestParseMaven(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "compilation failure, each error printed twice",
			in: `[INFO] --- maven-compiler-plugin:3.11.0:compile (default-compile) @ demo ---
[INFO] Changes detected - recompiling the module! :source
[INFO] Compiling 2 source files with javac [debug target 17] to target/classes
[WARNING] /home/dev/proj/src/main/java/com/example/Old.java:[5,17] [deprecation] Date(int,int,int) in Date has been deprecated
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR : 
[INFO] -------------------------------------------------------------
[ERROR] /home/dev/proj/src/main/java/com/example/App.java:[12,9] cannot find symbol
  symbol:   variable foo
  location: class com.example.App
[ERROR] /home/dev/proj/src/main/java/com/example/App.java:[20,16] incompatible types: String cannot be converted to int
[INFO] 2 errors 
[INFO] -------------------------------------------------------------
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project demo: Compilation failure: Compilation failure: 
[ERROR] /home/dev/proj/src/main/java/com/example/App.java:[12,9] cannot find symbol
[ERROR]   symbol:   variable foo
[ERROR]   location: class com.example.App
[ERROR] /home/dev/proj/src/main/java/com/example/App.java:[20,16] incompatible types: String cannot be converted to int
[ERROR] -> [Help 1]
`,
			want: []Finding{
				fd("src/main/java/com/example/Old.java", 5, 17, LevelWarning, ToolJava, "[deprecation] Date(int,int,int) in Date has been deprecated"),
				fd("src/main/java/com/example/App.java", 12, 9, LevelError, ToolJava, "cannot find symbol"),
				fd("src/main/java/com/example/App.java", 20, 16, LevelError, ToolJava, "incompatible types: String cannot be converted to int"),
			},
		},
		{
			name: "coloured, a relative path, a line without a column, and a file outside",
			in: "[\x1b[1;31mERROR\x1b[m] src/test/java/AppTest.java:[7] ';' expected\n" +
				"[\x1b[1;33mWARNING\x1b[m] /usr/lib/jvm/src/Foo.java:[1,1] outside the workspace\n" +
				"[ERROR] Failed to execute goal on project demo: Could not resolve dependencies\n" +
				"[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException\n",
			want: []Finding{
				fd("src/test/java/AppTest.java", 7, 0, LevelError, ToolJava, "';' expected"),
			},
		},
	})
}

func TestParseKotlin(t *testing.T) {
	runCases(t, []parseCase{{
		name: "file URI and the older form",
		in: `> Task :compileKotlin FAILED
e: file:///home/dev/proj/src/main/kotlin/App.kt:12:5 Unresolved reference 'foo'.
w: /home/dev/proj/src/main/kotlin/Util.kt: (3, 9): Variable 'x' is never used
e: Compilation error. See log for more details
`,
		want: []Finding{
			fd("src/main/kotlin/App.kt", 12, 5, LevelError, ToolKotlin, "Unresolved reference 'foo'."),
			fd("src/main/kotlin/Util.kt", 3, 9, LevelWarning, ToolKotlin, "Variable 'x' is never used"),
		},
	}})
}
