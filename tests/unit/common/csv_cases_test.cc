#include "common/csv_cases.h"

#include <gtest/gtest.h>

namespace mculab {
namespace {

const OpInfo& Conv() { return *FindOp("conv2d_s8"); }
const OpInfo& Fc() { return *FindOp("fully_connected_s8"); }

TEST(CsvCases, DesignExampleHeaderMatchesBySynonym) {
  auto t = ParseCasesCsv(
      "id,N,C,H,W,K,kernel_shape_0,kernel_shape_1,pads_0,pads_1,strides_0,strides_1\n"
      "0,1,16,32,32,32,3,3,1,1,1,1\n"
      "7,1,8,16,16,8,1,1,0,0,2,2\n",
      Conv());
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].id, 0);
  EXPECT_EQ(t->rows[0].params, (std::vector<int32_t>{1, 16, 32, 32, 32, 3, 3, 1, 1, 1, 1}));
  EXPECT_EQ(t->rows[1].id, 7);
  EXPECT_EQ(t->rows[1].params, (std::vector<int32_t>{1, 8, 16, 16, 8, 1, 1, 0, 0, 2, 2}));
  EXPECT_TRUE(t->warnings.empty());
}

// Found by fuzzing: a spreadsheet-style float beyond int32 is an error naming the cell, not an
// undefined conversion.
TEST(CsvCases, AFloatBeyondTheIntegerRangeIsAnError) {
  auto t = ParseCasesCsv("id,batch,in_features,out_features\n3,1,5.5e14,4\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("in_features"), std::string::npos) << t.error().message;
}

TEST(CsvCases, ColumnsAreReorderedIntoTheOpsOrder) {
  auto t = ParseCasesCsv("case,out_features,batch,in_features\n3,10,2,64\n", Fc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rows[0].id, 3);
  EXPECT_EQ(t->rows[0].params, (std::vector<int32_t>{2, 64, 10}));
}

TEST(CsvCases, MatchingIsCaseInsensitive) {
  auto t = ParseCasesCsv("ID,IN_FEATURES,Out_Features\n1,4,5\n", Fc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rows[0].params, (std::vector<int32_t>{1, 4, 5}));
}

TEST(CsvCases, ExtraColumnsAreIgnoredWithAWarning) {
  auto t = ParseCasesCsv("id,in,out,comment\n1,4,5,hello\n", Fc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_FALSE(t->warnings.empty());
  EXPECT_NE(t->warnings[0].find("'comment'"), std::string::npos);
}

TEST(CsvCases, OptionalParametersTakeTheirDefault) {
  auto t = ParseCasesCsv("id,N,C,H,W,K,kh,kw\n1,1,2,3,3,4,1,1\n", Conv());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rows[0].params, (std::vector<int32_t>{1, 2, 3, 3, 4, 1, 1, 0, 0, 1, 1}));
}

TEST(CsvCases, MissingRequiredColumnNamesTheParameterAndItsSynonyms) {
  auto t = ParseCasesCsv("id,N,C,H,W,kh,kw\n1,1,2,3,3,1,1\n", Conv());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("parameter K"), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("out_channels"), std::string::npos);
}

TEST(CsvCases, MissingValueNamesLineAndColumn) {
  auto t = ParseCasesCsv("id,in,out\n1,4,5\n2,,5\n", Fc(), "sweep.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "sweep.csv: line 3, column 'in': missing value");
}

TEST(CsvCases, NonNumericValueNamesLineAndColumn) {
  auto t = ParseCasesCsv("id,in,out\n1,4,five\n", Fc(), "sweep.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "sweep.csv: line 2, column 'out': 'five' is not an integer");
}

TEST(CsvCases, ShortRowIsAnError) {
  auto t = ParseCasesCsv("id,in,out\n1,4\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("line 2: 2 values, the header has 3 columns"),
            std::string::npos);
}

TEST(CsvCases, RepeatedCaseIdIsAnError) {
  auto t = ParseCasesCsv("id,in,out\n1,4,5\n1,4,6\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("case id 1 repeats"), std::string::npos);
}

TEST(CsvCases, ValueBelowMinimumIsAnError) {
  auto t = ParseCasesCsv("id,in,out\n1,0,5\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("below the minimum 1 for in_features"), std::string::npos);
}

TEST(CsvCases, TwoColumnsForOneParameterIsAnError) {
  auto t = ParseCasesCsv("id,in,input_size,out\n1,4,4,5\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("both name parameter in_features"), std::string::npos);
}

TEST(CsvCases, CrlfBomBlankLinesCommentsAndQuotesAreAccepted) {
  auto t = ParseCasesCsv("\xEF\xBB\xBFid,\"in\",out\r\n# a comment\r\n\r\n1,4,5\r\n2,\"8\",3.0\r\n",
                         Fc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1].params, (std::vector<int32_t>{1, 8, 3}));
}

TEST(CsvCases, EmptyFileAndHeaderOnlyAreErrors) {
  EXPECT_FALSE(ParseCasesCsv("", Fc()).ok());
  auto t = ParseCasesCsv("id,in,out\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("no cases"), std::string::npos);
}

TEST(CsvCases, FractionalValueIsNotAnInteger) {
  auto t = ParseCasesCsv("id,in,out\n1,4.5,5\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("'4.5' is not an integer"), std::string::npos);
}

TEST(CsvCases, UnterminatedQuoteIsAnError) {
  auto t = ParseCasesCsv("id,in,out\n1,\"4,5\n", Fc());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("unterminated quote"), std::string::npos);
}

TEST(CsvLines, QuotedFieldsKeepCommasBlanksAndDoubledQuotes) {
  auto lines = ReadCsvLines("id,note\n3,\"a, b\"\n4,\" x \"\n5,\"say \"\"hi\"\"\"\n", "t.csv");
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  ASSERT_EQ(lines->size(), 4u);
  EXPECT_EQ((*lines)[1].fields, (std::vector<std::string>{"3", "a, b"}));
  EXPECT_EQ((*lines)[2].fields, (std::vector<std::string>{"4", " x "}));
  EXPECT_EQ((*lines)[3].fields, (std::vector<std::string>{"5", "say \"hi\""}));
}

TEST(CsvLines, CommentsAndBlankLinesAreSkippedButCounted) {
  auto lines = ReadCsvLines("# a sweep\nid , note\r\n\n   # indented comment\n 7 ,x\r\n", "t.csv");
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].number, 2u);
  EXPECT_EQ((*lines)[0].fields, (std::vector<std::string>{"id", "note"}));
  EXPECT_EQ((*lines)[1].number, 5u);
  EXPECT_EQ((*lines)[1].fields, (std::vector<std::string>{"7", "x"}));
}

TEST(CsvLines, AQuoteClosedBeforeTheCarriageReturnKeepsNoCarriageReturn) {
  auto lines = ReadCsvLines("id,note\r\n1,\"x\"\r\n", "t.csv");
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  EXPECT_EQ((*lines)[1].fields, (std::vector<std::string>{"1", "x"}));
}

TEST(CsvLines, AQuoteLeftOpenAtTheEndOfALineNamesTheLine) {
  auto lines = ReadCsvLines("id\n1\n\"2,\n", "t.csv");
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().message, "t.csv: line 3: unterminated quote");
}

TEST(CaseIdsCsv, ReadsTheFirstColumnAndIgnoresTheOthers) {
  auto ids = ParseCaseIdsCsv("id,note\n3,first\n7,second,extra\n", "ids.csv");
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<std::int64_t>{3, 7}));
}

TEST(CaseIdsCsv, AcceptsCommentsAndQuotedCells) {
  auto ids = ParseCaseIdsCsv(
      "# ids for the custom runner\n\"id\",\"note\"\n\"3\",\"first, with a comma\"\n"
      "# the next one is slow\n7,\"a \"\"quoted\"\" word\"\n",
      "ids.csv");
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<std::int64_t>{3, 7}));
}

TEST(CaseIdsCsv, ANonIntegerIdNamesTheLine) {
  auto ids = ParseCaseIdsCsv("id\n1\nx\n", "ids.csv");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.error().message, "ids.csv:3: the first column must be an integer case id, got 'x'");
}

TEST(CaseIdsCsv, ARepeatedIdIsAnError) {
  auto ids = ParseCaseIdsCsv("id\n1\n2\n1\n", "ids.csv");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.error().message, "ids.csv:4: case id 1 appears twice");
}

TEST(CaseIdsCsv, AHeaderWithoutCasesIsAnError) {
  EXPECT_FALSE(ParseCaseIdsCsv("id,note\n# nothing yet\n", "ids.csv").ok());
  EXPECT_FALSE(ParseCaseIdsCsv("", "ids.csv").ok());
}

}  // namespace
}  // namespace mculab
