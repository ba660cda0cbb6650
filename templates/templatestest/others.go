package templatestest

// pythonProject is a src-layout package: its tests import it, so they
// pass only once it is installed. It declares pytest as a test extra,
// as ordinary packages do; with pytest on the machine the template's
// install needs no index.
func pythonProject() Project {
	return Project{
		Name: "python", Template: "ci-python", Tools: []string{"python3"},
		Probe: []string{"python3", "-c", "import ensurepip, pytest, setuptools"},
		Files: map[string]string{
			"pyproject.toml": `[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "hello"
version = "1.0"

[project.optional-dependencies]
test = ["pytest"]
`,
			"src/hello/__init__.py": "def greet(name):\n    return f\"hello, {name}\"\n",
			"tests/test_hello.py":   "from hello import greet\n\n\ndef test_greet():\n    assert greet(\"world\") == \"hello, world\"\n",
		},
		Broken:     map[string]string{"src/hello/__init__.py": "def greet(name):\n    return f\"goodbye, {name}\"\n"},
		FailedNode: "test", Finding: "tests/test_hello.py:5",
	}
}

// rustProject is a library crate with a unit test.
func rustProject() Project {
	return Project{
		Name: "rust", Template: "ci-rust", Tools: []string{"cargo"},
		Probe: []string{"cargo", "clippy", "--version"},
		Files: map[string]string{
			"Cargo.toml": "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
			"src/lib.rs": "pub fn greet(name: &str) -> String {\n    format!(\"hello, {name}\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        assert_eq!(super::greet(\"world\"), \"hello, world\");\n    }\n}\n",
		},
		// An unused variable: a warning for cargo build, an error for
		// clippy -D warnings.
		Broken:     map[string]string{"src/lib.rs": "pub fn greet(name: &str) -> String {\n    let unused = 1;\n    format!(\"hello, {name}\")\n}\n"},
		FailedNode: "clippy", Finding: "src/lib.rs:2",
	}
}

// javaProject is a Maven project with a JUnit test. Maven fetches its
// plugins and JUnit from Maven Central, so the probe (an offline
// compile of a project needing the same plugins) says whether they are
// at hand. Maven prints compile errors as "[ERROR] path:[line,col]",
// which the findings parser does not read yet: no Finding.
func javaProject() Project {
	return Project{
		Name: "java-maven", Template: "ci-java", Tools: []string{"mvn", "java"},
		Probe: []string{"mvn", "-B", "-q", "-o", "-Dstyle.color=never", "dependency:resolve-plugins"},
		Files: map[string]string{
			"pom.xml": `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>hello</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
`,
			"src/main/java/hello/Hello.java":     "package hello;\n\npublic class Hello {\n    public static String greet(String name) { return \"hello, \" + name; }\n}\n",
			"src/test/java/hello/HelloTest.java": "package hello;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class HelloTest {\n    @Test\n    public void greets() { assertEquals(\"hello, world\", Hello.greet(\"world\")); }\n}\n",
		},
		Broken:     map[string]string{"src/main/java/hello/Hello.java": "package hello;\n\npublic class Hello {\n    public static String greet(String name) { return \"hello, \" + nam; }\n}\n"},
		FailedNode: "compile",
	}
}

// gradleProject is javaProject built with Gradle, whose javac errors
// read "path:line: error: message".
func gradleProject() Project {
	p := javaProject()
	delete(p.Files, "pom.xml")
	p.Files["settings.gradle"] = "rootProject.name = 'hello'\n"
	p.Files["build.gradle"] = "plugins { id 'java' }\n\nrepositories { mavenCentral() }\n\ndependencies { testImplementation 'junit:junit:4.13.2' }\n"
	p.Name, p.Tools, p.Probe = "java-gradle", []string{"gradle", "java"}, []string{"gradle", "--offline", "-q", "dependencies", "--configuration", "testRuntimeClasspath"}
	p.Finding = "src/main/java/hello/Hello.java:4"
	return p
}

// genericProject is a repository whose Makefile's test target checks a
// file and reports in the "path:line: error: message" form.
func genericProject() Project {
	return Project{
		Name: "generic", Template: "ci-generic", Tools: []string{"make", "awk"},
		Files: map[string]string{
			"Makefile":     "test:\n\t@awk '/goodbye/ { printf \"greeting.txt:%d: error: the greeting says goodbye\\n\", NR; bad = 1 } END { exit bad }' greeting.txt\n",
			"greeting.txt": "hello\nworld\n",
		},
		Broken:     map[string]string{"greeting.txt": "hello\ngoodbye\n"},
		FailedNode: "test", Finding: "greeting.txt:2",
	}
}
