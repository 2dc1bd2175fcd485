# Seconds each integration ctest entry took (it_<file> or it_<file>.<test>), measured on a
# 2-core machine: ctest starts the longest first (COST), so they do not end a parallel run
# alone. ctest keeps its own measurements (build/Testing/Temporary/CTestCostData.txt) and uses
# those once it has them; these are for a fresh build folder. A missing entry costs 0.
