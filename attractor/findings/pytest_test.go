package findings

import "testing"

func TestParsePytest(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "long tracebacks",
			in: `============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0
rootdir: /home/dev/proj
collected 4 items

tests/test_calc.py .F.F                                                  [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 2) == 5
E       assert 4 == 5
E        +  where 4 = add(2, 2)

tests/test_calc.py:12: AssertionError
______________________________ TestDiv.test_zero _______________________________

self = <tests.test_calc.TestDiv object at 0x7f3a2c1d0e50>

    def test_zero(self):
>       assert div(1, 0) == 0

tests/test_calc.py:25: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

a = 1, b = 0

    def div(a, b):
>       return a / b
E       ZeroDivisionError: division by zero

calc/ops.py:9: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 4 == 5
FAILED tests/test_calc.py::TestDiv::test_zero - ZeroDivisionError: division by zero
========================= 2 failed, 2 passed in 0.05s ==========================
`,
			want: []Finding{
				fd("tests/test_calc.py", 12, 0, LevelError, ToolPytest, "AssertionError: assert 4 == 5"),
				fd("calc/ops.py", 9, 0, LevelError, ToolPytest, "ZeroDivisionError: division by zero"),
				fd("tests/test_calc.py", 25, 0, LevelError, ToolPytest, "TestDiv::test_zero failed: ZeroDivisionError: division by zero"),
			},
		},
		{
			name: "short tracebacks, parametrised test",
			in: `=================================== FAILURES ===================================
___________________________________ test_add ___________________________________
tests/test_calc.py:12: in test_add
    assert add(2, 2) == 5
E   assert 4 == 5
E    +  where 4 = add(2, 2)
____________________________ test_parse[bad-input] _____________________________
tests/test_parse.py:30: in test_parse
    parse(text)
src/parser.py:77: in parse
    raise ValueError(f"bad token {tok!r}")
E   ValueError: bad token 'x'
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 4 == 5
FAILED tests/test_parse.py::test_parse[bad-input] - ValueError: bad token 'x'
========================= 2 failed in 0.04s ====================================
`,
			want: []Finding{
				fd("tests/test_calc.py", 12, 0, LevelError, ToolPytest, "test_add failed: assert 4 == 5"),
				fd("tests/test_parse.py", 30, 0, LevelError, ToolPytest, "test_parse[bad-input] failed: ValueError: bad token 'x'"),
			},
		},
		{
			name: "no tracebacks: line 1",
			in: `tests/test_calc.py .F                                                    [100%]
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 4 == 5
FAILED tests/test_calc.py::test_sub
FAILED /home/dev/elsewhere/test_x.py::test_y - assert 0
`,
			want: []Finding{
				fd("tests/test_calc.py", 1, 0, LevelError, ToolPytest, "test_add failed: assert 4 == 5"),
				fd("tests/test_calc.py", 1, 0, LevelError, ToolPytest, "test_sub failed"),
			},
		},
		{
			name: "collection and fixture errors",
			in: `==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_import.py _____________________
ImportError while importing test module '/home/dev/proj/tests/test_import.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package)
tests/test_import.py:3: in <module>
    import missing_mod
E   ModuleNotFoundError: No module named 'missing_mod'
__________________________ ERROR at setup of test_db ___________________________
file /home/dev/proj/tests/test_db.py, line 8
  def test_db(conn):
E       fixture 'conn' not found
/home/dev/proj/tests/test_db.py:8
=========================== short test summary info ============================
ERROR tests/test_import.py - ModuleNotFoundError: No module named 'missing_mod'
ERROR tests/test_db.py::test_db
`,
			want: []Finding{
				fd("tests/test_import.py", 3, 0, LevelError, ToolPytest, "error in tests/test_import.py: ModuleNotFoundError: No module named 'missing_mod'"),
				fd("tests/test_db.py", 8, 0, LevelError, ToolPytest, "error in test_db"),
			},
		},
	})
}
